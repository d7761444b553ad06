/**
 * @module plugins/oauth/discover-after-authorization
 * A remote plugin installed before Quiver held an authorization for it (the server answered
 * 401 at install: `source.needsAuthorization`, issue #27) has no tools yet. Once an
 * authorization of its URL completes, this re-discovers every such plugin with the owner who
 * just authorized (the hub's, or a user's / organisation's for a per-owner server), so its tools
 * reach the catalog without another command. Failures are reported per plugin, never thrown:
 * the authorization itself succeeded and stays.
 */
import type { PluginService } from '../service/index.ts';
import { ownerLabel, type DiscoveredAfterAuthorization, type RemoteOwner } from './remote-oauth.ts';

function sameUrl(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  try {
    const [x, y] = [new URL(a), new URL(b)];
    x.hash = '';
    y.hash = '';
    return x.href === y.href;
  } catch {
    return false;
  }
}

/** Re-discovers the plugins at `url` that wait for an authorization. */
export async function discoverWaitingPlugins(plugins: Pick<PluginService, 'list' | 'sync'>, url: string, owner: RemoteOwner): Promise<DiscoveredAfterAuthorization[]> {
  const waiting = (await plugins.list()).filter((plugin) => plugin.sourceType === 'url' && plugin.source['needsAuthorization'] === true && sameUrl(plugin.source['url'], url));
  const results: DiscoveredAfterAuthorization[] = [];
  for (const plugin of waiting) {
    try {
      const report = await plugins.sync(plugin.name, owner.kind === 'hub' ? {} : { discoverAs: ownerLabel(owner) });
      results.push(report.plugin.source['needsAuthorization'] === true ? { plugin: plugin.name, error: 'the server still answers 401' } : { plugin: plugin.name, tools: report.tools.total });
    } catch (error) {
      results.push({ plugin: plugin.name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return results;
}
