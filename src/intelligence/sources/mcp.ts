/**
 * @module intelligence/sources/mcp
 * The MCP discovery source (issue #14): what the server itself says in `tools/list` — names,
 * descriptions, input and output schemas, titles — and what its annotations imply
 * (MCP 2025-06-18 `ToolAnnotations`): `readOnlyHint` means no side effects, `destructiveHint`
 * a destructive one, `openWorldHint` an external system; `idempotentHint` (or read-only) makes
 * a retry safe, which becomes the tool's retry policy. Pure: it reads the catalog's copy of
 * the discovery, never starts the server.
 */
import { contentHash } from '../../core/hash.ts';
import type { ToolRecord } from '../../core/tool.ts';
import type { JsonObject, SourceResult } from '../types.ts';

/** Side effects implied by MCP tool annotations; an empty list for a read-only tool. */
export function sideEffectsFromAnnotations(annotations: JsonObject): JsonObject[] {
  if (annotations['readOnlyHint'] === true) return [];
  const effects: JsonObject[] = [];
  if (annotations['destructiveHint'] === true) effects.push({ type: 'destructive', description: 'may delete or overwrite data' });
  else if (annotations['readOnlyHint'] === false || annotations['destructiveHint'] === false) effects.push({ type: 'writes', description: 'changes state' });
  if (annotations['openWorldHint'] === true) effects.push({ type: 'external', description: 'reaches systems outside the plugin' });
  return effects;
}

/** Whether a call may be repeated safely: read-only or idempotent; undefined when the server does not say. */
export function retrySafeFromAnnotations(annotations: JsonObject): boolean | undefined {
  if (annotations['readOnlyHint'] === true || annotations['idempotentHint'] === true) return true;
  if (annotations['idempotentHint'] === false) return false;
  return undefined;
}

/** The fields of one discovered tool that generation reads (and hashes). */
function discoveredFields(tool: ToolRecord): JsonObject {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
    outputSchema: tool.returnSchema,
    annotations: tool.annotations,
    title: tool.displayName,
  };
}

/** The tool definitions discovery gives, with side effects and retry safety from annotations. */
export function mcpSource(discovered: readonly ToolRecord[]): SourceResult {
  const sorted = [...discovered].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tools: Record<string, JsonObject> = {};
  for (const tool of sorted) {
    const definition: JsonObject = { name: tool.name };
    if (tool.description.trim() !== '') definition['description'] = tool.description;
    if (Object.keys(tool.parameters).length > 0) definition['inputSchema'] = tool.parameters;
    if (tool.returnSchema !== null) definition['outputSchema'] = tool.returnSchema;
    if (Object.keys(tool.annotations).length > 0) {
      definition['sideEffects'] = sideEffectsFromAnnotations(tool.annotations);
      const retrySafe = retrySafeFromAnnotations(tool.annotations);
      if (retrySafe !== undefined) definition['retrySafe'] = retrySafe;
    }
    tools[tool.name] = definition;
  }
  return { source: 'mcp', inputHash: contentHash(sorted.map(discoveredFields)), partial: { tools }, warnings: [] };
}
