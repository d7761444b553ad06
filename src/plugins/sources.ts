/**
 * @module plugins/sources
 * What `quiver plugin add SOURCE` means (seed 003 "Plugin Registration"; DESIGN §3.5). One
 * string picks the kind, with explicit prefixes winning over guesses:
 *
 * | source                                                      | kind   |
 * |-------------------------------------------------------------|--------|
 * | `npm:<spec>`                                                | npm    |
 * | `pypi:<name>[==<version>]` (also `name@version`, as uvx writes it) | pypi (a Python package, issue #26) |
 * | `market:<registry name>`                                    | market |
 * | `openapi:<file or http(s) URL>` (with `--base-url URL`)     | openapi (a REST API, issue #14) |
 * | `container:<image>` (e.g. `container:ghcr.io/o/server:1`)    | container (run through docker or podman, issue #26) |
 * | `git+<url>`, `git://…`, `ssh://…`, `git@host:path`, `file://…` | git  |
 * | `http(s)://…` ending in `.git`, or `https://github.com/o/r` (also gitlab.com, bitbucket.org, codeberg.org) | git |
 * | any other `http(s)://…`                                     | url (remote MCP endpoint) |
 * | `path:<folder>`, or an existing folder that is not a bare git repository | path |
 * | an existing bare git repository (a folder with HEAD, objects/, refs/)     | git  |
 *
 * A local working tree is a `path` source (referenced in place, for development); point at
 * it with `file://` to install a pinned clone of it instead.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { invalidInput } from '../core/errors.ts';

/** A parsed plugin source. */
export type PluginSource =
  | { kind: 'git'; url: string }
  | { kind: 'npm'; spec: string }
  /** A package of the Python index pip is configured with (issue #26). */
  | { kind: 'pypi'; requirement: string; name: string }
  | { kind: 'path'; path: string }
  | { kind: 'url'; url: string }
  | { kind: 'market'; name: string }
  /** A REST API: its OpenAPI document (absolute path or URL) and the API root its operations are called on. */
  | { kind: 'openapi'; location: string; baseUrl?: string | undefined }
  /** A container image, run through the docker or podman found on PATH (runtime/container.ts, issue #26). */
  | { kind: 'container'; image: string };

const GIT_HOSTS = new Set(['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org']);

/** True when `folder` looks like a bare git repository. */
export function isBareGitRepository(folder: string): boolean {
  try {
    return (
      statSync(folder).isDirectory() &&
      existsSync(join(folder, 'HEAD')) &&
      statSync(join(folder, 'objects')).isDirectory() &&
      statSync(join(folder, 'refs')).isDirectory()
    );
  } catch {
    return false;
  }
}

function rejectOptionLike(text: string, what: string): void {
  // A value starting with "-" would be read by git or npm as an option (argument injection).
  if (text.startsWith('-')) throw invalidInput(`${what} must not start with "-": '${text}'`);
}

/** Parses a source string; `cwd` resolves relative folders. Throws `invalid_input` for nonsense. */
export function parsePluginSource(input: string, cwd: string = process.cwd()): PluginSource {
  const text = input.trim();
  if (text === '') throw invalidInput('a plugin source is required (git URL, npm:<package>, folder, http(s) URL or market:<name>)');
  if (/[\0\n\r]/.test(text)) throw invalidInput('a plugin source must be one line of text');

  if (text.startsWith('npm:')) {
    const spec = text.slice(4).trim();
    if (spec === '') throw invalidInput("'npm:' needs a package, e.g. npm:@modelcontextprotocol/server-memory");
    rejectOptionLike(spec, 'an npm package spec');
    return { kind: 'npm', spec };
  }
  if (text.startsWith('pypi:')) return parsePypiSource(text.slice(5).trim());
  if (text.startsWith('openapi:')) return parseOpenApiSource(text.slice(8).trim(), cwd);
  if (text.startsWith('container:')) {
    const image = text.slice(10).trim();
    if (!/^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$/.test(image) || image.length > 512) {
      throw invalidInput(`'${text}' is not a container image: use container:IMAGE, e.g. container:ghcr.io/github/github-mcp-server:v0.20.0`);
    }
    return { kind: 'container', image };
  }
  if (text.startsWith('market:')) {
    const name = text.slice(7).trim();
    if (name === '') throw invalidInput("'market:' needs a marketplace server name, e.g. market:io.github.user/server");
    return { kind: 'market', name };
  }
  if (text.startsWith('path:')) {
    const folder = resolve(cwd, text.slice(5).trim());
    return { kind: 'path', path: folder };
  }
  if (text.startsWith('git+')) {
    const url = text.slice(4);
    rejectOptionLike(url, 'a git URL');
    return { kind: 'git', url };
  }
  if (/^(git|ssh|file):\/\//.test(text) || /^[\w.-]+@[\w.-]+:/.test(text)) return { kind: 'git', url: text };
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalidInput(`'${text}' is not a valid URL`);
    }
    const segments = url.pathname.split('/').filter(Boolean);
    if (url.pathname.endsWith('.git') || (GIT_HOSTS.has(url.hostname) && segments.length === 2)) return { kind: 'git', url: text };
    return { kind: 'url', url: url.toString() };
  }
  rejectOptionLike(text, 'a plugin source');
  const folder = resolve(cwd, text);
  if (existsSync(folder)) {
    if (isBareGitRepository(folder)) return { kind: 'git', url: folder };
    if (statSync(folder).isDirectory()) return { kind: 'path', path: folder };
    throw invalidInput(`'${text}' is a file, not a plugin folder`);
  }
  throw invalidInput(
    `cannot tell what '${text}' is: no such folder. Use a git URL, npm:<package>, an existing folder, an http(s) MCP endpoint or market:<name>`,
  );
}

const PYPI_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const PYPI_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+!_-]*$/;

/** `pypi:NAME`, `pypi:NAME==VERSION` or `pypi:NAME@VERSION` → a pinned-or-latest requirement (no URLs, no markers). */
export function parsePypiSource(text: string): PluginSource {
  const match = /^([^=@\s]+)(?:(?:==|@)([^\s]+))?$/.exec(text);
  const name = match?.[1];
  const version = match?.[2];
  if (name === undefined || !PYPI_NAME.test(name) || (version !== undefined && !PYPI_VERSION.test(version))) {
    throw invalidInput(`'pypi:${text}' is not a Python package: use pypi:NAME or pypi:NAME==VERSION, e.g. pypi:mcp-server-time==2025.1.0`);
  }
  return { kind: 'pypi', requirement: version === undefined ? name : `${name}==${version}`, name };
}

/** `openapi:<file or URL>`: a URL as given, a file made absolute against `cwd`. */
function parseOpenApiSource(location: string, cwd: string): PluginSource {
  if (location === '') throw invalidInput("'openapi:' needs an OpenAPI document, e.g. openapi:./petstore.yaml or openapi:https://api.example.com/openapi.json");
  if (/^https?:\/\//i.test(location)) {
    try {
      return { kind: 'openapi', location: new URL(location).toString() };
    } catch {
      throw invalidInput(`'${location}' is not a valid URL`);
    }
  }
  return { kind: 'openapi', location: resolve(cwd, location) };
}

/** A readable default plugin name for a source (slugified by the caller). */
export function defaultNameHint(source: PluginSource): string {
  switch (source.kind) {
    case 'npm': {
      // "@scope/name@1.2.3" → "name"; "name@^1" → "name".
      const withoutVersion = source.spec.replace(/^(@[^/]+\/[^@]+|[^@]+)@.*$/, '$1');
      return withoutVersion.split('/').pop() ?? withoutVersion;
    }
    case 'pypi':
      return source.name;
    case 'git': {
      const last = source.url.replace(/[/\\]+$/, '').split(/[/\\:]/).pop() ?? 'plugin';
      return last.replace(/\.git$/, '');
    }
    case 'path':
      return source.path.replace(/[/\\]+$/, '').split(/[/\\]/).pop() ?? 'plugin';
    case 'url': {
      const url = new URL(source.url);
      const segments = url.pathname.split('/').filter((segment) => segment !== '' && segment !== 'mcp' && segment !== 'sse');
      return segments.length > 0 ? `${url.hostname}-${segments.join('-')}` : url.hostname;
    }
    case 'market':
      return source.name.split('/').pop() ?? source.name;
    case 'container':
      // "ghcr.io/github/github-mcp-server:v1" → "github-mcp-server".
      return (source.image.split('@')[0]!.split('/').pop() ?? source.image).replace(/:[^:]*$/, '');
    case 'openapi': {
      // "…/petstore.yaml" → "petstore"; "https://api.example.com/v1/openapi.json" → "api.example.com-v1".
      const last = source.location.replace(/[?#].*$/, '').replace(/[/\\]+$/, '').split(/[/\\]/).pop() ?? 'api';
      const stem = last.replace(/\.(json|ya?ml)$/i, '');
      if (!/^(openapi|swagger|api|spec)$/i.test(stem) || !/^https?:/i.test(source.location)) return stem;
      const url = new URL(source.location);
      const folders = url.pathname.split('/').filter(Boolean).slice(0, -1);
      return [url.hostname, ...folders].join('-');
    }
  }
}
