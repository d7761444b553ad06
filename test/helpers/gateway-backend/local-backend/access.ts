/**
 * @module test/helpers/gateway-backend/local-backend/access
 * Who sees what (seed 004 §9): a plugin may be restricted to workspaces and granted to
 * organisations, roles or users (any grant suffices; no grants = everyone); the session's
 * expert allow-list narrows tools further. What a session may not see does not exist for it,
 * and a plugin whose manifest is `silent` is never listed.
 */
import { parseQualifiedName } from '../../../../src/core/names.ts';
import type { BackendSession, GatewayTool } from '../../../../src/gateway/backend.ts';
import type { PluginState } from './types.ts';

/** True when the session's workspace has the plugin and a grant (if any) matches. */
export function pluginVisible(plugin: PluginState, session: BackendSession): boolean {
  const { workspaces, grants } = plugin.spec;
  if (workspaces && !workspaces.includes(session.workspace)) return false;
  if (!grants) return true;
  return (
    (session.orgId !== null && (grants.orgs ?? []).includes(session.orgId)) ||
    (session.userId !== null && (grants.users ?? []).includes(session.userId)) ||
    session.roles.some((role) => (grants.roles ?? []).includes(role))
  );
}

/** True unless the session's expert allow-list leaves the tool out. */
export function toolVisible(tool: GatewayTool, session: BackendSession): boolean {
  return !session.expertAllowList || session.expertAllowList.includes(tool.qualifiedName);
}

/** Every non-silent tool the session may see, plugin by plugin. */
export function visibleTools(plugins: ReadonlyMap<string, PluginState>, session: BackendSession): GatewayTool[] {
  const out: GatewayTool[] = [];
  for (const plugin of plugins.values()) {
    if (!pluginVisible(plugin, session)) continue;
    for (const tool of plugin.tools) if (tool.visibility !== 'silent' && toolVisible(tool, session)) out.push(tool);
  }
  return out;
}

/** A tool by qualified name with its plugin, when the session may see both (silent tools included: they can be called). */
export function findVisibleTool(
  plugins: ReadonlyMap<string, PluginState>,
  session: BackendSession,
  qualifiedName: string,
): { plugin: PluginState; tool: GatewayTool } | undefined {
  const parsed = parseQualifiedName(qualifiedName);
  if (!parsed) return undefined;
  const plugin = plugins.get(parsed.plugin);
  if (!plugin || !pluginVisible(plugin, session)) return undefined;
  const tool = plugin.tools.find((candidate) => candidate.qualifiedName === qualifiedName);
  if (!tool || !toolVisible(tool, session)) return undefined;
  return { plugin, tool };
}

/** True when the plugin is listed for the session: visible and not silent. */
export function pluginListed(plugin: PluginState, session: BackendSession): boolean {
  return pluginVisible(plugin, session) && plugin.spec.manifest?.visibility !== 'silent';
}

/** A listed plugin by name. */
export function listedPlugin(plugins: ReadonlyMap<string, PluginState>, session: BackendSession, name: string): PluginState | undefined {
  const plugin = plugins.get(name);
  return plugin && pluginListed(plugin, session) ? plugin : undefined;
}

/** The plugin's tools the session sees in listings (not silent, allowed). */
export function listedTools(plugin: PluginState, session: BackendSession): GatewayTool[] {
  return plugin.tools.filter((tool) => tool.visibility !== 'silent' && toolVisible(tool, session));
}
