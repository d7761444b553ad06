/**
 * @module plugins/oauth/revoke-on-removal
 * Removing a remote plugin revokes the OAuth authorization Quiver held for its server (issue
 * #27): after the removal, if no other installed plugin reaches the same URL, the tokens are
 * revoked at the authorization server (RFC 7009) and forgotten — every owner's: the hub's, each
 * user's and each organisation's. Wraps the plugin service's
 * `remove` at the composition root, so the CLI, the API and the UI all revoke.
 */
import type { Database } from '../../store/database.ts';
import { listPluginRecords, type PluginRecord } from '../../store/repositories/plugins.ts';
import type { Logger } from '../../core/logger.ts';
import type { PluginService } from '../service.ts';
import type { RemoteOAuth } from './remote-oauth.ts';

function remoteUrl(record: PluginRecord): string | undefined {
  const launch = record.launch as { transport?: unknown; url?: unknown } | null;
  return launch?.transport === 'http' && typeof launch.url === 'string' ? launch.url : undefined;
}

/** The plugin service whose `remove` also revokes the removed remote plugin's authorization. */
export function withRemoteRevocation(plugins: PluginService, parts: { db: Database; remoteOAuth: RemoteOAuth; logger: Logger }): PluginService {
  // The service is a frozen object of closures: a copy with `remove` replaced, frozen again.
  return Object.freeze({
    ...plugins,
    async remove(reference: string) {
      const before = await listPluginRecords(parts.db, { includeRemoved: false });
      const url = before.map((record) => (record.name === reference || record.id === reference ? remoteUrl(record) : undefined)).find(Boolean);
      await plugins.remove(reference);
      if (url === undefined) return;
      const after = await listPluginRecords(parts.db, { includeRemoved: false });
      if (after.some((record) => remoteUrl(record) === url)) return; // another plugin still uses this authorization
      const { forgotten, revoked, owners } = await parts.remoteOAuth.revoke(url);
      if (forgotten) parts.logger.info({ plugin: reference, revoked, owners }, revoked ? 'remote authorization revoked and forgotten' : 'remote authorization forgotten (the server offers no revocation, or refused it)');
    },
  });
}
