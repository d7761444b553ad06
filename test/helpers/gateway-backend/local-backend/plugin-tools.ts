/**
 * @module test/helpers/gateway-backend/local-backend/plugin-tools
 * A plugin's tools as the gateway serves them: listed from the server (every page), named
 * `plugin__tool` (invalid names skipped with a warning), with the spec's visibility and pins,
 * their token cost, and a search document each.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { formatQualifiedName, isValidToolName } from '../../../../src/core/names.ts';
import type { GatewayTool } from '../../../../src/gateway/backend.ts';
import { toMcpTool, toolDefinitionTokens } from '../../../../src/gateway/meta-tools.ts';
import { toolDocument, type SearchDocument } from './lexical.ts';
import { collectPages } from './pages.ts';
import type { PluginState } from './types.ts';

/** Lists the plugin's tools and replaces its tools, original names and search documents. */
export async function loadTools(plugin: PluginState, client: Client, warnings: string[]): Promise<void> {
  const listed = await collectPages(async (cursor) => {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    return { items: page.tools, nextCursor: page.nextCursor };
  });
  const { spec } = plugin;
  const pinned = new Set(spec.pinned ?? []);
  const tools: GatewayTool[] = [];
  const originalNames = new Map<string, string>();
  const documents = new Map<string, SearchDocument>();
  for (const tool of listed) {
    if (!isValidToolName(tool.name)) {
      warnings.push(`plugin '${spec.name}': tool '${tool.name}' has an invalid name and is skipped`);
      continue;
    }
    const qualifiedName = formatQualifiedName(spec.name, tool.name);
    const base: GatewayTool = {
      qualifiedName,
      pluginName: spec.name,
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description ?? '',
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
      visibility: spec.toolVisibility?.[tool.name] ?? spec.manifest?.visibility ?? 'on-demand',
      ...(pinned.has(tool.name) ? { pinned: true } : {}),
      tokens: 0,
    };
    base.tokens = toolDefinitionTokens(toMcpTool(base));
    tools.push(base);
    originalNames.set(qualifiedName, tool.name);
    documents.set(qualifiedName, toolDocument(tool, spec.manifest));
  }
  plugin.tools = tools;
  plugin.originalNames = originalNames;
  plugin.documents = documents;
}
