/**
 * @module gateway/meta-tools
 * The gateway's own tools (DESIGN §3.8): `search_tools` (seed 004 §3.1), `list_capabilities`
 * and `load_capability` (seed 002 visibility tiers), and `call_tool`, the fallback for
 * clients that never refresh their tool list. Also the namespacing of resources and prompts.
 * Pure: definitions and text builders only; the gateway runs them.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { NAME_SEPARATOR, PLUGIN_NAME_PATTERN } from '../core/names.ts';
import { countJsonTokens } from '../core/tokens.ts';
import type { CatalogOverview, ExposureMode, GatewayTool } from './backend.ts';
import { UI_SCHEME, formatUiUri, parseUiUri, showAppToolMeta } from './mcp-apps.ts';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
export const LIST_CAPABILITIES = 'list_capabilities';
export const LOAD_CAPABILITY = 'load_capability';

/** Names reserved for meta-tools (no plugin tool can collide: plugin tools contain `__`). */
export const META_TOOL_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOLS, CALL_TOOL, LIST_CAPABILITIES, LOAD_CAPABILITY]);

/** How many plugins the search description names before summarising the rest. */
const DESCRIBED_PLUGINS = 12;

/**
 * The `search_tools` description, built from the live catalog so the model knows what kinds
 * of tools exist and when searching is worth it (seed 004 §3.1).
 */
export function searchToolsDescription(overview: CatalogOverview, maxLimit: number, still = false): string {
  const lead = still
    ? 'Find tools for a task. Describe the capability you need in plain words ' +
      '(e.g. "create a GitHub issue", "query a PostgreSQL database"); the best matches come back with their ' +
      'full definitions (input and output schemas, annotations). Run one with call_tool; your tool list does not change.'
    : 'Find tools for a task and make them callable. Describe the capability you need in plain words ' +
      '(e.g. "create a GitHub issue", "query a PostgreSQL database"); the best matches come back with their ' +
      'input schemas and token cost and are added to your tool list, so you can call them right away ' +
      '(or through call_tool).';
  if (overview.toolCount === 0) return `${lead} No tools are installed for you yet; a search may still suggest installable plugins.`;
  const plugins = [...overview.plugins].sort((a, b) => b.toolCount - a.toolCount || a.title.localeCompare(b.title));
  const named = plugins.slice(0, DESCRIBED_PLUGINS).map((plugin) => {
    const category = plugin.category ? `, ${plugin.category}` : '';
    return `${plugin.title} (${plugin.toolCount} tool${plugin.toolCount === 1 ? '' : 's'}${category})`;
  });
  const rest = plugins.length - named.length;
  const categories = [...new Set(plugins.map((plugin) => plugin.category).filter((c): c is string => Boolean(c)))].sort();
  return [
    lead,
    `Available: ${overview.toolCount} tool${overview.toolCount === 1 ? '' : 's'} from ${plugins.length} plugin${plugins.length === 1 ? '' : 's'}: ${named.join('; ')}${rest > 0 ? `; and ${rest} more` : ''}.`,
    ...(categories.length > 0 ? [`Categories: ${categories.join(', ')}.`] : []),
    `Search whenever you need a capability you do not see in your tool list. Returns up to ${maxLimit} tools.`,
  ].join(' ');
}

/** The `search_tools` definition. */
export function searchToolsDefinition(description: string, defaultLimit: number, maxLimit: number): Tool {
  return {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'The capability you need, in plain words.' },
        limit: { type: 'integer', minimum: 1, maximum: maxLimit, default: defaultLimit, description: 'How many tools to return.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/** The `call_tool` definition. */
export function callToolDefinition(mode: ExposureMode): Tool {
  const found = mode === 'capabilities' ? 'loaded with load_capability' : 'found with search_tools';
  return {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: `Calls a tool ${found} by its full name (plugin__tool) with its arguments. Use it when the tool does not appear in your tool list.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'The full tool name, e.g. github__create_issue.' },
        arguments: { type: 'object', description: "The tool's arguments, matching its input schema.", additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    },
  };
}

/** The `list_capabilities` definition (seed 002). */
export function listCapabilitiesDefinition(overview: CatalogOverview): Tool {
  return {
    name: LIST_CAPABILITIES,
    title: 'List capabilities',
    description:
      `Lists the ${overview.plugins.length} plugin${overview.plugins.length === 1 ? '' : 's'} you can load, with a summary, when to use each, ` +
      'tags, category and tool count. Then call load_capability with a plugin name to make its tools available.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/** The `load_capability` definition (seed 002). */
export function loadCapabilityDefinition(): Tool {
  return {
    name: LOAD_CAPABILITY,
    title: 'Load a capability',
    description: "Makes a plugin's tools available in this session. Use a name from list_capabilities.",
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: 'The plugin name from list_capabilities.' } },
      required: ['name'],
      additionalProperties: false,
    },
  };
}

/** A gateway tool as MCP `tools/list` shows it. */
export function toMcpTool(tool: GatewayTool): Tool {
  return {
    name: tool.qualifiedName,
    ...(tool.title ? { title: tool.title } : {}),
    // A description the plugin left out stays out (issue #24): the catalog keeps it as ''.
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    ...(tool.icons ? { icons: tool.icons } : {}),
    ...(tool.execution ? { execution: tool.execution } : {}),
    // MCP Apps (issue #24): the view a tool names is shown at the session's ui:// address.
    ...(tool._meta ? { _meta: showAppToolMeta(tool.pluginName, tool._meta) } : {}),
  };
}

/** Tokens an MCP tool definition costs as the model sees it. */
export function toolDefinitionTokens(tool: Tool): number {
  return countJsonTokens({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
}

/** Namespaces a plugin's resource URI: `quiver://<plugin>/<encoded original URI>`. */
export function formatResourceUri(pluginName: string, uri: string): string {
  // MCP Apps (issue #24): an app view keeps its scheme, namespaced inside it.
  if (uri.startsWith(UI_SCHEME)) return formatUiUri(pluginName, uri);
  return `quiver://${pluginName}/${encodeURIComponent(uri)}`;
}

/** Splits a namespaced resource URI; undefined when it is not one of ours. */
export function parseResourceUri(uri: string): { pluginName: string; uri: string } | undefined {
  if (uri.startsWith(UI_SCHEME)) return parseUiUri(uri, (name) => PLUGIN_NAME_PATTERN.test(name));
  const match = /^quiver:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match || !PLUGIN_NAME_PATTERN.test(match[1]!)) return undefined;
  try {
    return { pluginName: match[1]!, uri: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
}

/** Namespaces a prompt name: `<plugin>__<prompt>`. */
export function formatPromptName(pluginName: string, name: string): string {
  return `${pluginName}${NAME_SEPARATOR}${name}`;
}

/** Splits a namespaced prompt name; undefined when it is not one. */
export function parsePromptName(name: string): { pluginName: string; name: string } | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  if (at <= 0) return undefined;
  const pluginName = name.slice(0, at);
  const rest = name.slice(at + NAME_SEPARATOR.length);
  if (!PLUGIN_NAME_PATTERN.test(pluginName) || rest === '') return undefined;
  return { pluginName, name: rest };
}
