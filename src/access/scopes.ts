/**
 * @module access/scopes
 * What a credential may do: the scopes, the principal a presented key or token establishes, and
 * the checks on it. Kept apart from `access/api-keys.ts` (its schemas and store) so that what
 * only reads a principal, such as the gateway's session identity and through it the flags of
 * `quiver serve`, loads no schema library (issue #28: `quiver --help` stays light).
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';

/** What a key may do. `admin` implies every other scope; `metrics` only reads /metrics (issue #16). */
export const API_SCOPES = ['admin', 'read', 'select', 'mcp', 'metrics'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** Who is calling, as established from their key. */
export interface Principal {
  keyId: string;
  name: string;
  scopes: ApiScope[];
  workspaceId: string | null;
  projectId: string | null;
  orgId: string | null;
  userId: string | null;
  roles: string[];
  tier: string | null;
}

/** True when the principal holds `scope` (admin holds all). */
export function hasScope(principal: Principal, scope: ApiScope): boolean {
  return principal.scopes.includes('admin') || principal.scopes.includes(scope);
}

/** Throws `forbidden` unless the principal holds `scope`. */
export function requireScope(principal: Principal, scope: ApiScope): void {
  if (!hasScope(principal, scope)) {
    throw new QuiverError(ErrorCodes.forbidden, `this API key lacks the '${scope}' scope`);
  }
}
