/**
 * @module gateway/native-names
 * A session's native names (issue #12): when its workspace asks for them, tools, prompts and
 * resources are shown under their plugins' own names unless ambiguous (`core/native-names`
 * decides). Listing shows them; a call, read or prompt by a native name is translated back to
 * the prefixed form before anything else sees it, so visibility, the guard and the backend
 * work on prefixed names as always. Prefixed names keep working too.
 *
 * The naming is computed from everything the session may see, not from what one list shows:
 * in `search` mode a tool bound later must not change meaning under the model.
 */
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { nativeNaming, type NativeNaming } from '../core/native-names.ts';
import type { AggregatedList } from './backend.ts';
import { META_TOOL_NAMES, formatPromptName, formatResourceUri } from './meta-tools.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

/** The naming of every tool the session may see (meta-tool names stay reserved). */
export async function toolNaming(core: GatewayCore, state: SessionState): Promise<NativeNaming> {
  const tools = await core.backend.listVisibleTools(state.backendSession);
  const items = tools
    .filter((tool) => tool.visibility !== 'silent')
    .map((tool) => ({ pluginName: tool.pluginName, name: tool.qualifiedName.slice(tool.pluginName.length + 2), prefixed: tool.qualifiedName }));
  return nativeNaming(items, META_TOOL_NAMES);
}

/** The listed tools under their shown names (unchanged without native names). */
export async function showTools(core: GatewayCore, state: SessionState, tools: Tool[]): Promise<Tool[]> {
  if (!state.nativeNames) return tools;
  const naming = await toolNaming(core, state);
  return tools.map((tool) => ({ ...tool, name: naming.shown.get(tool.name) ?? tool.name }));
}

/** The prefixed name of a tool called by its native name (any other name is returned as is). */
export async function prefixedToolName(core: GatewayCore, state: SessionState, name: string): Promise<string> {
  if (!state.nativeNames || META_TOOL_NAMES.has(name)) return name;
  return (await toolNaming(core, state)).byNative.get(name) ?? name;
}

/** Resources listed with their shown URIs. */
export function showResources(state: SessionState, listed: AggregatedList<Resource>): Resource[] {
  const prefixed = listed.items.map(({ pluginName, item }) => ({ ...item, uri: formatResourceUri(pluginName, item.uri) }));
  if (!state.nativeNames) return prefixed;
  const naming = resourceNaming(listed);
  return prefixed.map((resource) => ({ ...resource, uri: naming.shown.get(resource.uri) ?? resource.uri }));
}

/** The naming of resources by URI. */
export function resourceNaming(listed: AggregatedList<Resource>): NativeNaming {
  return nativeNaming(listed.items.map(({ pluginName, item }) => ({ pluginName, name: item.uri, prefixed: formatResourceUri(pluginName, item.uri) })));
}

/** Prompts listed with their shown names. */
export function showPrompts(state: SessionState, listed: AggregatedList<Prompt>): Prompt[] {
  const prefixed = listed.items.map(({ pluginName, item }) => ({ ...item, name: formatPromptName(pluginName, item.name) }));
  if (!state.nativeNames) return prefixed;
  const naming = promptNaming(listed);
  return prefixed.map((prompt) => ({ ...prompt, name: naming.shown.get(prompt.name) ?? prompt.name }));
}

/** The naming of prompts by name. */
export function promptNaming(listed: AggregatedList<Prompt>): NativeNaming {
  return nativeNaming(listed.items.map(({ pluginName, item }) => ({ pluginName, name: item.name, prefixed: formatPromptName(pluginName, item.name) })));
}

/** The prefixed name of a prompt asked for by its native name (any other name is returned as is). */
export async function prefixedPromptName(core: GatewayCore, state: SessionState, name: string): Promise<string> {
  if (!state.nativeNames) return name;
  return promptNaming(await core.backend.listPrompts(state.backendSession)).byNative.get(name) ?? name;
}
