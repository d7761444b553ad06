/**
 * @module plugins/marketplace
 * Catalogs of installable plugins in the official MCP Registry `server.json` format
 * (https://github.com/modelcontextprotocol/registry, docs/reference/server-json): a single
 * server, an array of servers, or a registry API page `{servers: [...]}` whose items are
 * servers or `{server, _meta}` wrappers. Entries are parsed leniently (unknown keys kept,
 * as the format evolves) but every field Quiver acts on is checked.
 *
 * `installPlanFor` turns an entry into what `plugin add` needs: an npm package with stdio
 * transport (preferred: it runs locally under the sandbox), else a remote Streamable HTTP /
 * SSE endpoint. Other registry types (pypi, oci, nuget…) are listed but not installable yet.
 */
import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { formatIssues } from '../core/validation.ts';
import type { CredentialSpec } from '../core/plugin-metadata.ts';

const inputSchema = z.looseObject({
  name: z.string().min(1).max(200),
  description: z.string().max(10_000).optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().max(10_000).optional(),
  value: z.string().max(10_000).optional(),
});

const argumentSchema = z.looseObject({
  type: z.enum(['positional', 'named']).default('positional'),
  name: z.string().max(200).optional(),
  value: z.string().max(10_000).optional(),
  default: z.string().max(10_000).optional(),
  valueHint: z.string().max(200).optional(),
  isRequired: z.boolean().optional(),
});

const packageSchema = z.looseObject({
  registryType: z.string().min(1).max(50),
  identifier: z.string().min(1).max(500),
  version: z.string().max(100).optional(),
  registryBaseUrl: z.string().max(2_000).optional(),
  transport: z.looseObject({ type: z.string().min(1).max(50), url: z.string().max(2_000).optional() }).optional(),
  runtimeHint: z.string().max(100).optional(),
  packageArguments: z.array(argumentSchema).max(100).optional(),
  environmentVariables: z.array(inputSchema).max(100).optional(),
});

const remoteSchema = z.looseObject({
  type: z.string().min(1).max(50),
  url: z.string().url().max(2_048),
  headers: z.array(inputSchema).max(100).optional(),
});

/** One server entry (`server.json`). */
export const marketplaceServerSchema = z.looseObject({
  $schema: z.string().optional(),
  name: z
    .string()
    .min(3)
    .max(200)
    .regex(/^[A-Za-z0-9.-]+\/[A-Za-z0-9._-]+$/, 'must be a reverse-DNS name with one slash, e.g. io.github.user/server'),
  title: z.string().max(200).optional(),
  description: z.string().max(10_000).default(''),
  version: z.string().max(100).optional(),
  websiteUrl: z.string().max(2_048).optional(),
  repository: z.looseObject({ url: z.string().max(2_048).optional(), source: z.string().max(100).optional(), subfolder: z.string().max(1_000).optional() }).optional(),
  packages: z.array(packageSchema).max(50).optional(),
  remotes: z.array(remoteSchema).max(50).optional(),
});
/** A parsed marketplace entry. */
export type MarketplaceServer = z.output<typeof marketplaceServerSchema>;

/** The result of parsing a catalog file: the good entries and why the others were skipped. */
export interface ParsedMarketplaceCatalog {
  servers: MarketplaceServer[];
  warnings: string[];
}

/** Parses a catalog document (one server, an array, or `{servers: [...]}`). Entries that fail are skipped with a warning. */
export function parseMarketplaceCatalog(document: unknown): ParsedMarketplaceCatalog {
  let items: unknown[];
  if (Array.isArray(document)) items = document;
  else if (document !== null && typeof document === 'object' && Array.isArray((document as { servers?: unknown }).servers)) {
    items = (document as { servers: unknown[] }).servers;
  } else if (document !== null && typeof document === 'object' && 'name' in document) items = [document];
  else throw invalidInput('a marketplace catalog is a server.json object, an array of them, or {"servers": [...]}');

  const servers: MarketplaceServer[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  items.forEach((item, index) => {
    // Registry API pages wrap each entry: {server: {...}, _meta: {...}}.
    const candidate = item !== null && typeof item === 'object' && 'server' in item && !('name' in item) ? (item as { server: unknown }).server : item;
    const parsed = marketplaceServerSchema.safeParse(candidate);
    if (!parsed.success) {
      const reasons = formatIssues(parsed.error).slice(0, 3).map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      warnings.push(`entry ${index} skipped: ${reasons}`);
      return;
    }
    if (seen.has(parsed.data.name)) {
      warnings.push(`entry ${index} skipped: '${parsed.data.name}' appears more than once (the first is kept)`);
      return;
    }
    seen.add(parsed.data.name);
    servers.push(parsed.data);
  });
  return { servers, warnings };
}

/** What installing a marketplace entry amounts to. */
export type MarketplaceInstallPlan =
  | { kind: 'npm'; spec: string; args: string[]; credentials: CredentialSpec[]; defaults: Record<string, string> }
  | { kind: 'url'; url: string; credentials: CredentialSpec[]; defaults: Record<string, string> };

/** An environment-variable-safe credential name for an HTTP header (`X-Api-Key` → `X_API_KEY`). */
export function credentialNameForHeader(header: string): string {
  const name = header.replace(/[^A-Za-z0-9_]/g, '_').toUpperCase();
  return /^[A-Za-z_]/.test(name) ? name : `H_${name}`;
}

/** Chooses how to install an entry: an npm package over stdio first, else a remote endpoint. */
export function installPlanFor(server: MarketplaceServer): MarketplaceInstallPlan {
  const npm = (server.packages ?? []).find((pkg) => pkg.registryType === 'npm' && (pkg.transport?.type ?? 'stdio') === 'stdio');
  if (npm !== undefined) {
    const credentials: CredentialSpec[] = [];
    const defaults: Record<string, string> = {};
    for (const variable of npm.environmentVariables ?? []) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable.name)) continue;
      credentials.push({
        name: variable.name,
        required: variable.isRequired ?? false,
        as: 'env',
        ...(variable.description === undefined ? {} : { description: variable.description.slice(0, 2_000) }),
      });
      const preset = variable.value ?? variable.default;
      if (preset !== undefined && variable.isSecret !== true) defaults[variable.name] = preset;
    }
    const args: string[] = [];
    for (const argument of npm.packageArguments ?? []) {
      const value = argument.value ?? argument.default;
      if (argument.type === 'named' && argument.name !== undefined) {
        args.push(argument.name);
        if (value !== undefined) args.push(value);
      } else if (value !== undefined) args.push(value);
    }
    return { kind: 'npm', spec: npm.version ? `${npm.identifier}@${npm.version}` : npm.identifier, args, credentials, defaults };
  }
  const remote = (server.remotes ?? []).find((entry) => entry.type === 'streamable-http' || entry.type === 'sse');
  if (remote !== undefined) {
    const credentials: CredentialSpec[] = [];
    const defaults: Record<string, string> = {};
    for (const header of remote.headers ?? []) {
      const name = credentialNameForHeader(header.name);
      credentials.push({
        name,
        required: header.isRequired ?? false,
        as: 'header',
        header: header.name,
        ...(header.description === undefined ? {} : { description: header.description.slice(0, 2_000) }),
      });
      const preset = header.value ?? header.default;
      if (preset !== undefined && header.isSecret !== true) defaults[name] = preset;
    }
    return { kind: 'url', url: remote.url, credentials, defaults };
  }
  const kinds = [...new Set([...(server.packages ?? []).map((pkg) => pkg.registryType), ...(server.remotes ?? []).map((r) => r.type)])];
  throw invalidInput(
    `marketplace entry '${server.name}' cannot be installed: Quiver installs npm packages (stdio) and streamable-http / sse remotes` +
      (kinds.length > 0 ? `; this entry offers ${kinds.join(', ')}` : '; this entry lists no packages or remotes'),
  );
}
