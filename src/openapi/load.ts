/**
 * @module openapi/load
 * Reading OpenAPI documents (issue #14): JSON or YAML, from a file or an http(s) URL, each
 * document size-capped, and readers that never leave the root document's folder (a local
 * folder, or the URL's directory on the same origin), so a `$ref` cannot pull
 * `/etc/passwd` or an internal URL into a plugin's catalog.
 */
import { open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { lazyRequire } from '../core/lazy-require.ts';
import { ErrorCodes, QuiverError, invalidInput } from '../core/errors.ts';
import { BodyTooLargeError, readBounded } from './bounded-body.ts';

/** The YAML parser, required on the first YAML document (issue #28: 72 modules `quiver serve` loads for nothing otherwise). */
const yaml = lazyRequire<typeof import('yaml')>('yaml');

/** Default cap on one OpenAPI document (JSON or YAML text). */
export const OPENAPI_DOCUMENT_LIMIT = 5 * 1024 * 1024;

/** Reads the root document and the documents its `$ref`s name, inside one boundary. */
export interface SpecReader {
  /** The root document's location (absolute path or URL). */
  readonly root: string;
  /** Reads and parses the document at `location` (as given by `resolve`). */
  read(location: string): Promise<unknown>;
  /** Resolves `reference` (a relative path or URL) from `base`; throws when it leaves the boundary. */
  resolve(base: string, reference: string): string;
  /** A short, stable name of `location` relative to the boundary (e.g. `schemas/pet.yaml`). */
  key(location: string): string;
}

/** Options of a reader. */
export interface ReaderOptions {
  maxBytes?: number;
  /** URL documents: time allowed per fetch, ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Parses OpenAPI text: JSON when it looks like JSON, else YAML (a superset of JSON). */
export function parseOpenApiText(text: string, name: string): unknown {
  const trimmed = text.trimStart();
  try {
    if (trimmed.startsWith('{')) return JSON.parse(trimmed) as unknown;
    // Aliases are bounded (the yaml package's default, explicit) so that a "billion laughs" document cannot exhaust memory.
    return yaml.parse(text, { maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw invalidInput(`${name} is neither valid JSON nor valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

function tooLarge(name: string, maxBytes: number): QuiverError {
  return new QuiverError(ErrorCodes.payloadTooLarge, `${name} is larger than ${maxBytes} bytes`, { details: { maxBytes } });
}

function withinFolder(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

async function readCapped(path: string, name: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw invalidInput(error.code === 'ENOENT' ? `${name} does not exist` : `cannot read ${name}: ${error.code ?? error.message}`);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw invalidInput(`${name} is not a file`);
    if (info.size > maxBytes) throw tooLarge(name, maxBytes);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** A reader for a document on disk: `$ref`s may name files in its folder and below, never outside. */
export async function createFileReader(file: string, options: ReaderOptions = {}): Promise<SpecReader> {
  const maxBytes = options.maxBytes ?? OPENAPI_DOCUMENT_LIMIT;
  const absolute = resolve(file);
  const rootReal = await realpath(absolute).catch(() => {
    throw invalidInput(`OpenAPI document ${file} does not exist`);
  });
  const folder = dirname(rootReal);
  return {
    root: rootReal,
    async read(location) {
      const name = relative(folder, location) || location;
      const real = await realpath(location).catch(() => {
        throw invalidInput(`the OpenAPI document references ${name}, which does not exist`);
      });
      // A link inside the folder that points out of it is refused like a `../` path.
      if (!withinFolder(folder, real)) throw invalidInput(`the OpenAPI document references ${name}, which lies outside its folder; refused`);
      return parseOpenApiText(await readCapped(real, name, maxBytes), name);
    },
    resolve(base, reference) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(reference) || isAbsolute(reference)) {
        throw invalidInput(`$ref '${reference}' is absolute; only files next to the OpenAPI document (relative paths) may be referenced`);
      }
      const target = resolve(dirname(base), decodeURIComponent(reference));
      if (!withinFolder(folder, target)) throw invalidInput(`$ref '${reference}' leads outside the OpenAPI document's folder; refused`);
      return target;
    },
    key: (location) => relative(folder, location).split(sep).join('/'),
  };
}

async function fetchCapped(url: URL, options: Required<Pick<ReaderOptions, 'maxBytes' | 'timeoutMs'>> & { fetch: typeof fetch }): Promise<string> {
  const label = `${url.origin}${url.pathname}`;
  let response: Response;
  try {
    // Redirects are not followed: a document must come from where it was said to be.
    response = await options.fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(options.timeoutMs), headers: { accept: 'application/json, application/yaml, text/yaml, */*' } });
  } catch (error) {
    throw new QuiverError(ErrorCodes.unavailable, `cannot fetch OpenAPI document ${label}: ${(error as Error).message}`);
  }
  if (!response.ok) throw new QuiverError(ErrorCodes.unavailable, `fetching OpenAPI document ${label} answered HTTP ${response.status}`);
  try {
    return (await readBounded(response, options.maxBytes)).toString('utf8');
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw tooLarge(label, options.maxBytes);
    throw error;
  }
}

/** A reader for a document at an http(s) URL: `$ref`s may name documents under the same directory of the same origin. */
export function createUrlReader(url: string, options: ReaderOptions = {}): SpecReader {
  const rootUrl = new URL(url);
  if (rootUrl.protocol !== 'http:' && rootUrl.protocol !== 'https:') throw invalidInput(`'${url}' is not an http(s) URL`);
  if (rootUrl.username !== '' || rootUrl.password !== '') throw invalidInput('OpenAPI URLs with embedded credentials are refused');
  rootUrl.hash = '';
  const prefix = new URL('.', rootUrl).href;
  const settings = { maxBytes: options.maxBytes ?? OPENAPI_DOCUMENT_LIMIT, timeoutMs: options.timeoutMs ?? 30_000, fetch: options.fetch ?? fetch };
  return {
    root: rootUrl.href,
    async read(location) {
      return parseOpenApiText(await fetchCapped(new URL(location), settings), location);
    },
    resolve(base, reference) {
      const target = new URL(reference, base);
      target.hash = '';
      if (target.origin !== rootUrl.origin || !target.href.startsWith(prefix)) {
        throw invalidInput(`$ref '${reference}' leads outside ${prefix}; refused`);
      }
      return target.href;
    },
    key: (location) => location.slice(prefix.length) || location,
  };
}

/** The reader for a location: an http(s) URL or a file path (relative to `cwd`). */
export async function createSpecReader(location: string, options: ReaderOptions & { cwd?: string } = {}): Promise<SpecReader> {
  if (/^https?:\/\//i.test(location)) return createUrlReader(location, options);
  return createFileReader(resolve(options.cwd ?? process.cwd(), location), options);
}
