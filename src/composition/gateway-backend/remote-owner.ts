/**
 * @module composition/gateway-backend/remote-owner
 * Whose OAuth authorization a session's request to a remote plugin carries (issue #27). The
 * admin sets it per server URL: the hub's (one account for every caller, the default), each
 * user's or each organisation's. For a per-user or per-organisation server the spec gets the
 * owner (`authorizationOwner`), so the supervisor keeps that owner's connections apart and the
 * connection asks for that owner's token. It fails closed: a session without the identity the
 * setting needs, or an owner that never authorized, is refused at once with the command that
 * connects it; it never falls back to the hub's or anyone else's token.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { BackendSession } from '../../gateway/backend.ts';
import { connectHint, ownerLabel, type RemoteOAuth, type RemoteOwner } from '../../plugins/oauth/remote-oauth.ts';
import type { UpstreamSpec } from '../../runtime/index.ts';

/** The spec a session's request uses: the spec itself, or the same one bound to the session's owner. */
export type OwnedSpec = (spec: UpstreamSpec, session: BackendSession) => Promise<UpstreamSpec>;

/** Specs are used unchanged when no remote OAuth is wired (tests, an app without it). */
export const unowned: OwnedSpec = async (spec) => spec;

/** Creates the resolver over the remote OAuth service. */
export function createRemoteOwnership(remote: Pick<RemoteOAuth, 'ownerKind' | 'accessToken'>): OwnedSpec {
  // One derived object per (spec, owner): the supervisor caches parsing and hashing per object.
  const derived = new WeakMap<UpstreamSpec, Map<string, UpstreamSpec>>();

  function bound(spec: UpstreamSpec, label: string): UpstreamSpec {
    let byOwner = derived.get(spec);
    if (!byOwner) derived.set(spec, (byOwner = new Map()));
    let owned = byOwner.get(label);
    if (!owned) byOwner.set(label, (owned = { ...spec, authorizationOwner: label } as UpstreamSpec));
    return owned;
  }

  return async (spec, session) => {
    if (spec.transport !== 'http') return spec;
    const kind = await remote.ownerKind(spec.url);
    if (kind === 'hub') return spec;
    const id = kind === 'user' ? session.userId : session.orgId;
    if (!id) {
      throw new QuiverError(
        ErrorCodes.missingCredential,
        `plugin '${spec.pluginName}' at ${spec.url} acts with each ${kind}'s own authorization, and this session has no ${kind} ` +
          `(use an API key bound to a ${kind}, or sign in with OAuth as one)`,
        { kind: 'user', details: { reason: 'no_owner', ownerKind: kind, pluginId: spec.pluginId } },
      );
    }
    const owner: RemoteOwner = { kind, id };
    // Fail fast, before any connection: an owner who never authorized gets the way to connect.
    if ((await remote.accessToken(spec.url, owner)) === undefined) {
      throw new QuiverError(
        ErrorCodes.missingCredential,
        `plugin '${spec.pluginName}' has no authorization at ${spec.url} for ${kind} '${id}': ${connectHint(spec.url, owner)}`,
        { kind: 'user', details: { reason: 'not_authorized', ownerKind: kind, pluginId: spec.pluginId } },
      );
    }
    return bound(spec, ownerLabel(owner));
  };
}
