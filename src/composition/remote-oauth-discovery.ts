/**
 * @module composition/remote-oauth-discovery
 * A remote plugin installed before Quiver held an authorization for it (it answered 401, issue
 * #27) is discovered once an authorization of its URL completes. The OAuth client is built before
 * the plugins service (whose supervisor's calls carry its tokens), so the link is this wrapper,
 * built after both (issue #28: no variable captured before it is assigned): `complete` runs the
 * client's, then re-discovers the waiting plugins and adds them to what it reports.
 */
import type { PluginService } from '../plugins/service.ts';
import { discoverWaitingPlugins } from '../plugins/oauth/discover-after-authorization.ts';
import { HUB_OWNER, type RemoteOAuth } from '../plugins/oauth/remote-oauth.ts';

/** The OAuth client whose completed authorizations discover the plugins waiting for them. */
export function withWaitingDiscovery(remoteOAuth: RemoteOAuth, plugins: Pick<PluginService, 'list' | 'sync'>): RemoteOAuth {
  return Object.freeze({
    ...remoteOAuth,
    async complete(url: string, callback: URLSearchParams, owner?: Parameters<RemoteOAuth['complete']>[2]) {
      const completed = await remoteOAuth.complete(url, callback, owner);
      // Failures are reported per plugin, never thrown: the authorization itself succeeded and stays.
      const discovered = await discoverWaitingPlugins(plugins, url, owner ?? HUB_OWNER);
      return { ...completed, discovered: [...completed.discovered, ...discovered] };
    },
  });
}
