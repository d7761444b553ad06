/**
 * @module plugins/install/openapi
 * Installing a REST API from its OpenAPI document (issue #14, `openapi:FILE-or-URL`). Fetching
 * reads the document and every file its `$ref`s name (never outside its folder or URL
 * directory), bundles them into one `openapi.json`, checks it yields tools, and stages it in a
 * folder named by its content and base URL (`<cacheDir>/openapi/<sha256>`), so the plugin is
 * pinned: it never reads the original again until `quiver plugin update`. A document by URL is
 * fetched under the remote plugins' SSRF guard (issue #27). The launch runs the
 * MCP server Quiver generates from it in process (runtime/in-process.ts).
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import { credentialNames, openApiToolDefinitions, readOpenApiDocument } from '../../openapi/index.ts';
import { createRemotePluginFetch, parseOAuthNetworkPolicy } from '../oauth/network-guard.ts';
import type { UpstreamSpecInput } from '../../runtime/types.ts';
import type { StoredOpenApiLaunch } from '../launch.ts';
import type { FetchedSource } from './types.ts';
import type { FailStep } from './failure.ts';
import type { Staging } from './staging.ts';
import type { InstallerSettings } from './types.ts';

/** The pinned document's file name inside the plugin folder. */
export const OPENAPI_DOCUMENT_FILE = 'openapi.json';

/**
 * The API root: `--base-url`, else the document's first server URL, resolved against the
 * document's own URL when it is relative (OpenAPI: "relative to the location where the
 * OpenAPI document is being served"); a relative server of a document on disk needs `--base-url`.
 */
function chooseBaseUrl(given: string | undefined, servers: readonly string[], location: string, fail: FailStep): string {
  const fromDocument = /^https?:\/\//i.test(location) && servers[0] !== undefined && !servers[0].includes('{') ? new URL(servers[0], location).toString() : undefined;
  const candidate = given ?? servers.find((server) => /^https?:\/\//i.test(server)) ?? fromDocument;
  if (candidate === undefined) {
    throw fail('launch', `the OpenAPI document names no absolute server URL${servers.length > 0 ? ` (it lists ${servers.join(', ')})` : ''}; pass --base-url URL, the API root its paths are appended to`);
  }
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw fail('launch', `--base-url '${candidate}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail('launch', `--base-url must be an http(s) URL, got '${candidate}'`);
  if (url.username !== '' || url.password !== '') throw fail('launch', 'base URLs with embedded credentials are refused (they would be stored in plain text); use plugin secrets (docs/openapi.md)');
  if (url.search !== '' || url.hash !== '') throw fail('launch', '--base-url must not have a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

/** Reads, bundles and stages an OpenAPI document; fails at `fetch-spec` or `launch`. */
export async function fetchOpenApi(
  input: { settings: InstallerSettings; staging: Staging; fail: FailStep },
  source: { location: string; baseUrl?: string | undefined },
): Promise<FetchedSource> {
  const { settings, staging, fail } = input;
  let bundled;
  let toolSet;
  try {
    // Issue #27: a document by URL is fetched under the remote plugins' SSRF guard (fail closed: its default without one).
    const fetchDocument = settings.fetchRemoteDocument ?? createRemotePluginFetch(parseOAuthNetworkPolicy(undefined));
    bundled = await readOpenApiDocument(source.location, { timeoutMs: settings.discoveryTimeoutMs, fetch: fetchDocument });
    toolSet = openApiToolDefinitions(bundled.document);
  } catch (error) {
    if (error instanceof QuiverError) throw fail('fetch-spec', error.message, { cause: error });
    throw error;
  }
  if (toolSet.tools.length === 0) throw fail('fetch-spec', 'the OpenAPI document has no operations, so there is nothing to call');
  const baseUrl = chooseBaseUrl(source.baseUrl, toolSet.servers, source.location, fail);
  const text = `${JSON.stringify(bundled.document, null, 2)}\n`;
  const digest = createHash('sha256').update(text).update('\0').update(baseUrl).digest('hex');
  const tree = join(await staging.ensure('openapi'), 'tree');
  await mkdir(tree, { recursive: true });
  await writeFile(join(tree, OPENAPI_DOCUMENT_FILE), text, { mode: 0o644 });
  return {
    root: tree,
    finalPath: join(settings.cacheDir, 'openapi', digest.slice(0, 32)),
    relativeFolder: '.',
    inPlace: false,
    sourceType: 'openapi',
    sourceRecord: {
      location: source.location,
      baseUrl,
      sha256: digest,
      openapi: toolSet.openapi,
      title: toolSet.title,
      files: bundled.files,
      // Which plugin secrets each security scheme reads, most specific first (shown by `plugin show`).
      secrets: Object.fromEntries(Object.values(toolSet.securitySchemes).map((scheme) => [scheme.name, Object.values(credentialNames(scheme)).flat()])),
    },
    revision: undefined,
    packageVersion: toolSet.version,
    warnings: toolSet.warnings,
  };
}

/** The stored launch of an OpenAPI plugin. */
export function openApiLaunch(fetched: FetchedSource): StoredOpenApiLaunch {
  const baseUrl = fetched.sourceRecord['baseUrl'];
  if (typeof baseUrl !== 'string') throw new QuiverError('internal', 'an OpenAPI plugin was fetched without a base URL');
  return { transport: 'openapi', document: OPENAPI_DOCUMENT_FILE, baseUrl };
}

/** The runtime spec of an OpenAPI plugin: the pinned document in its folder, the base URL, the secrets. */
export function openApiUpstreamSpec(
  base: Pick<UpstreamSpecInput, 'pluginId' | 'pluginName' | 'version' | 'trustLevel'>,
  launch: StoredOpenApiLaunch,
  root: string | undefined,
  env: Record<string, string>,
): UpstreamSpecInput {
  if (root === undefined) throw new QuiverError('internal', `OpenAPI plugin '${base.pluginName}' has no folder`);
  return { ...base, transport: 'openapi', document: join(root, launch.document), baseUrl: launch.baseUrl, env };
}
