/**
 * @module gateway/mcp-apps
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, issue #24) through the gateway. A
 * plugin's `ui://` resource keeps its scheme, so a host still recognises it as an app view: it
 * is namespaced inside the scheme, `ui://<plugin>/<the rest of the plugin's URI>`, where other
 * resources get `quiver://<plugin>/<encoded URI>`. A tool's `_meta.ui.resourceUri` (and the
 * older flat `_meta["ui/resourceUri"]`) is rewritten to that address, so the host reads the
 * view the tool names from the plugin that serves it. The view's `text/html;profile=mcp-app`
 * MIME type and its `_meta.ui` pass through untouched. A tool tied to an app (it names a view,
 * or its `visibility` includes `app`) is called by the app through the host, not found by the
 * model with a search, so the search surface does not refuse it for "call search_tools first".
 */

/** The scheme of an app view. */
export const UI_SCHEME = 'ui://';

/** The `_meta` key of the flat form some servers still use for a tool's view. */
const FLAT_RESOURCE_URI_KEY = 'ui/resourceUri';

/** The session's address of a plugin's `ui://` URI: `ui://<plugin>/<rest>`. */
export function formatUiUri(pluginName: string, uri: string): string {
  return `${UI_SCHEME}${pluginName}/${uri.slice(UI_SCHEME.length)}`;
}

/** The plugin and its own URI behind a session's `ui://<plugin>/<rest>`; undefined when it is not one. */
export function parseUiUri(uri: string, isPluginName: (name: string) => boolean): { pluginName: string; uri: string } | undefined {
  const match = /^ui:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match || !isPluginName(match[1]!)) return undefined;
  return { pluginName: match[1]!, uri: `${UI_SCHEME}${match[2]!}` };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tool's `_meta` with the views it names shown at the session's address (the same object when it names none). */
export function showAppToolMeta(pluginName: string, meta: Record<string, unknown>): Record<string, unknown> {
  const ui = meta['ui'];
  const nested = isRecord(ui) && typeof ui['resourceUri'] === 'string' && ui['resourceUri'].startsWith(UI_SCHEME);
  const flat = typeof meta[FLAT_RESOURCE_URI_KEY] === 'string' && (meta[FLAT_RESOURCE_URI_KEY] as string).startsWith(UI_SCHEME);
  if (!nested && !flat) return meta;
  return {
    ...meta,
    ...(nested ? { ui: { ...(ui as Record<string, unknown>), resourceUri: formatUiUri(pluginName, (ui as Record<string, string>)['resourceUri']!) } } : {}),
    ...(flat ? { [FLAT_RESOURCE_URI_KEY]: formatUiUri(pluginName, meta[FLAT_RESOURCE_URI_KEY] as string) } : {}),
  };
}

/** Whether a tool belongs to an app: it names a view, or an app may call it (`visibility` includes `app`). */
export function isAppTool(meta: Record<string, unknown> | undefined): boolean {
  if (!meta) return false;
  if (typeof meta[FLAT_RESOURCE_URI_KEY] === 'string') return true;
  const ui = meta['ui'];
  if (!isRecord(ui)) return false;
  if (typeof ui['resourceUri'] === 'string') return true;
  return Array.isArray(ui['visibility']) && ui['visibility'].includes('app');
}
