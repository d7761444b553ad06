/**
 * @module access/oauth/token-principal
 * Turns the claims of a validated access token into a Quiver `Principal` (issue #27). The admin
 * configures which claim names the organisation, which the user and which the groups, and for
 * each admitted organisation (the value of the org claim) what its users may be at most: the
 * Quiver organisation, the scopes, the roles, the tier and workspace. A token never widens that:
 * - scopes are the token's scopes (`scope`, space-separated, or `scp`) that the org grants;
 * - roles are the token's groups that the org grants (other groups are dropped);
 * - an organisation that is not admitted is refused (`forbidden`), so a token of another tenant
 *   of the same identity provider reaches nothing here.
 * `admin` is never granted by a token: administration stays with API keys.
 */
import type { JWTPayload } from 'jose';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import type { ApiScope, Principal } from '../api-keys.ts';

/** Scopes a token may carry into Quiver (never `admin`). */
export const TOKEN_SCOPES = ['mcp', 'read', 'select', 'metrics'] as const satisfies readonly ApiScope[];

/** The org key that admits every organisation (or none) the issuer's tokens name. */
export const ANY_ORGANISATION = '*';

/** What the users of one admitted organisation may be at most (parsed by `loadConfig`, QUIVER_OAUTH_ORGS). */
export interface AdmittedOrganisation {
  /** The Quiver organisation these tokens act in (default: the claim value itself). */
  org?: string | undefined;
  scopes: readonly string[];
  roles: readonly string[];
  tier?: string | undefined;
  workspaceId?: string | undefined;
}

/** How token claims map onto Quiver. */
export interface ClaimMapping {
  /** The claim holding the organisation (default `org`). */
  orgClaim: string;
  /** The claim holding the user id (default `sub`). */
  userClaim: string;
  /** The claim holding groups / roles (default `groups`). */
  rolesClaim: string;
  /** Admitted organisations by claim value; `*` admits any. */
  organisations: Readonly<Record<string, AdmittedOrganisation>>;
}

function claimAt(claims: JWTPayload, name: string): unknown {
  // Dotted names reach nested claims (`realm_access.roles` in Keycloak).
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/** The scopes a token carries (`scope` string per RFC 9068, or an `scp` list). */
export function tokenScopes(claims: JWTPayload): string[] {
  return stringList(claims.scope ?? claims.scp);
}

function forbidden(message: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, message);
}

/** The principal a validated token stands for; throws `forbidden` for an organisation not admitted. */
export function principalFromClaims(claims: JWTPayload, mapping: ClaimMapping): Principal {
  const user = claimAt(claims, mapping.userClaim);
  if (typeof user !== 'string' || user === '') throw new QuiverError(ErrorCodes.unauthorized, `the access token has no '${mapping.userClaim}' claim`);
  const orgValue = claimAt(claims, mapping.orgClaim);
  const orgs = stringList(orgValue);
  // One organisation per token: a list of several is ambiguous, and guessing could widen.
  if (orgs.length > 1) throw forbidden(`the access token names ${orgs.length} organisations in '${mapping.orgClaim}'; Quiver needs exactly one`);
  const claimed = orgs[0];
  const admitted = (claimed !== undefined ? mapping.organisations[claimed] : undefined) ?? mapping.organisations[ANY_ORGANISATION];
  if (!admitted) {
    throw forbidden(claimed === undefined ? `the access token names no organisation ('${mapping.orgClaim}') and this Quiver admits only listed ones` : `the organisation '${claimed}' is not admitted by this Quiver`);
  }
  // Never `admin`, even if a configuration listed it.
  const granted = new Set<string>(admitted.scopes.filter((scope) => (TOKEN_SCOPES as readonly string[]).includes(scope)));
  const scopes = [...new Set(tokenScopes(claims))].filter((scope): scope is ApiScope => granted.has(scope));
  const allowedRoles = new Set(admitted.roles);
  const roles = [...new Set(stringList(claimAt(claims, mapping.rolesClaim)))].filter((role) => allowedRoles.has(role)).sort();
  const org = admitted.org ?? claimed ?? null;
  return {
    // The session owner key: one user of one issuer, whatever token they present.
    keyId: `token:${user}`,
    name: `access token of ${user}`,
    scopes,
    workspaceId: admitted.workspaceId ?? null,
    projectId: null,
    orgId: org,
    userId: user,
    roles,
    tier: admitted.tier ?? null,
  };
}
