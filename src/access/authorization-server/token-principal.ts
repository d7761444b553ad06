/**
 * @module access/authorization-server/token-principal
 * What an access token of the built-in authorization server may do: never more than its account
 * may do now. On every request the account is read: a disabled or removed account's tokens stop
 * working at once (401); a token naming another organisation than the account's (the account was
 * moved since) is refused (403); scopes and roles are those of the token that the account still
 * holds. `admin` is never among them (administration stays with API keys).
 */
import type { JWTPayload } from 'jose';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import type { ApiScope, Principal } from '../api-keys.ts';
import { TOKEN_SCOPES, tokenScopes } from '../oauth/token-principal.ts';
import type { UserDirectory } from './users.ts';

export async function principalOfAccount(claims: JWTPayload, users: Pick<UserDirectory, 'active'>): Promise<Principal> {
  const user = typeof claims.sub === 'string' ? await users.active(claims.sub) : undefined;
  if (!user) throw new QuiverError(ErrorCodes.unauthorized, 'the account of this access token is disabled or does not exist');
  if (claims.org !== user.orgId) {
    throw new QuiverError(ErrorCodes.forbidden, `the access token is for organisation '${String(claims.org)}', which is not the account's organisation; sign in again`);
  }
  const held = new Set<string>(user.scopes.filter((scope) => (TOKEN_SCOPES as readonly string[]).includes(scope)));
  const scopes = [...new Set(tokenScopes(claims))].filter((scope): scope is ApiScope => held.has(scope));
  const groups = Array.isArray(claims.groups) ? claims.groups.filter((group): group is string => typeof group === 'string') : [];
  const roles = [...new Set(groups)].filter((role) => user.roles.includes(role)).sort();
  return {
    // The session owner key: one account, whatever token it presents.
    keyId: `token:${user.id}`,
    name: `access token of ${user.email}`,
    scopes,
    workspaceId: null,
    projectId: null,
    orgId: user.orgId,
    userId: user.email,
    roles,
    tier: null,
  };
}
