/**
 * @module gateway/identity
 * Who an MCP session acts for: from `quiver serve --stdio` flags, or from the API key of an
 * HTTP connection (scope `mcp`). With neither binding, the `default` workspace. Over HTTP the
 * identity is the key's alone (issue #18): nothing the client sends — query, headers,
 * `initialize` parameters, meta-tool arguments — names an organisation, workspace or role;
 * only the exposure mode is the connection's choice.
 */
import type { ParseArgsConfig } from 'node:util';
import { invalidInput } from '../core/errors.ts';
import { requireScope, type Principal } from '../access/scopes.ts';
import { EXPOSURE_MODES, type ExposureMode, type SessionIdentity } from './backend.ts';
import { DEFAULT_WORKSPACE } from '../core/names.ts';

/** The workspace of a session with no binding. */
export { DEFAULT_WORKSPACE };

/** Flags of `quiver serve --stdio` that shape the session identity. */
export const MCP_STDIO_OPTIONS = {
  stdio: { type: 'boolean', default: false },
  workspace: { type: 'string' },
  project: { type: 'string' },
  org: { type: 'string' },
  user: { type: 'string' },
  role: { type: 'string', multiple: true },
  tier: { type: 'string' },
  exposure: { type: 'string' },
  'allow-tool': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

/** Parses an exposure mode from a flag, header or query value. */
export function parseExposureMode(value: unknown): ExposureMode | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && (EXPOSURE_MODES as readonly string[]).includes(value)) return value as ExposureMode;
  throw invalidInput(`exposure mode must be one of ${EXPOSURE_MODES.join(', ')}, got '${String(value)}'`);
}

function stringFlag(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function listFlag(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item !== '') : [];
}

/** The identity of a stdio session, from `--workspace --project --org --user --role --tier --exposure --allow-tool`. */
export function identityFromFlags(values: Record<string, unknown>): SessionIdentity {
  const allowList = listFlag(values['allow-tool']);
  const exposureMode = parseExposureMode(values.exposure);
  return {
    workspace: stringFlag(values.workspace) ?? DEFAULT_WORKSPACE,
    project: stringFlag(values.project),
    orgId: stringFlag(values.org),
    userId: stringFlag(values.user),
    roles: listFlag(values.role),
    tier: stringFlag(values.tier),
    ...(allowList.length > 0 ? { expertAllowList: allowList } : {}),
    ...(exposureMode ? { exposureMode } : {}),
  };
}

/**
 * The identity of an HTTP session: the key's bindings (scope `mcp` required); the exposure
 * mode may be chosen per connection with `?exposure=` or the `x-quiver-exposure` header.
 */
export function identityFromPrincipal(principal: Principal, request: Request): SessionIdentity {
  requireScope(principal, 'mcp');
  const exposureMode = parseExposureMode(new URL(request.url).searchParams.get('exposure') ?? request.headers.get('x-quiver-exposure'));
  return {
    workspace: principal.workspaceId ?? DEFAULT_WORKSPACE,
    project: principal.projectId,
    orgId: principal.orgId,
    userId: principal.userId,
    roles: principal.roles,
    tier: principal.tier,
    ...(exposureMode ? { exposureMode } : {}),
  };
}
