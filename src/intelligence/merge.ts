/**
 * @module intelligence/merge
 * Merges the sources' partial documents into one Plugin Intelligence Document with per-field
 * provenance (issue #14). Precedence, highest first: the author's own document and manifest >
 * MCP discovery > zod > TypeScript > OpenAPI > LLM (SOURCE_PRECEDENCE). A field a higher source
 * set is never replaced by a lower one; objects are merged key by key, so a lower source only
 * fills what the higher ones left empty (a JSDoc `@param` text describes a property the zod
 * schema left undescribed). Lists are taken whole from the highest source that has them. When
 * discovery ran, its tool list is the truth: definitions of tools the server does not serve
 * are dropped with a warning. Example requests are the exception to "lists whole": they add
 * up (the author's first, then each source's new ones), since each is one more way to ask.
 */
import { PID_SCHEMA_VERSION } from '../plugins/intelligence.ts';
import { SOURCE_PRECEDENCE, type JsonObject, type Provenance, type SourceName, type SourceResult } from './types.ts';

/** Lists that add up across sources instead of being taken whole from the highest one. */
const UNION_KEYS = new Set(['exampleRequests']);

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);
const clone = <T>(value: T): T => structuredClone(value);

/** Fills `target` with what `value` has and `target` lacks, recording each filled path. */
function fill(target: JsonObject, value: JsonObject, source: SourceName, path: string, provenance: Provenance, depth = 0): void {
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    const at = `${path}.${key}`;
    const current = target[key];
    if (current === undefined) {
      target[key] = clone(member);
      provenance[at] = source;
    } else if (UNION_KEYS.has(key) && Array.isArray(current) && Array.isArray(member)) {
      // Example requests add up: the author's first, then every source's new ones.
      const seen = new Set(current.map((entry) => String(entry).toLowerCase()));
      for (const entry of member) {
        if (seen.has(String(entry).toLowerCase())) continue;
        seen.add(String(entry).toLowerCase());
        provenance[`${at}.${current.length}`] = source;
        current.push(entry);
      }
    } else if (isObject(current) && isObject(member) && depth < 8) {
      fill(current, member, source, at, provenance, depth + 1);
    }
  }
}

const firstSentence = (text: string): string => {
  const trimmed = text.trim();
  const match = /^(.{12,300}?[.!?])(\s|$)/s.exec(trimmed);
  return (match?.[1] ?? trimmed.slice(0, 300)).replace(/\s+/g, ' ');
};

/** Capabilities from tool descriptions when no source stated any (the summary an LLM reads first). */
function deriveCapabilities(semantic: JsonObject, tools: JsonObject[], provenance: Provenance): void {
  if (semantic['capabilities'] !== undefined) return;
  const capabilities: string[] = [];
  for (const tool of tools) {
    if (typeof tool['description'] === 'string' && tool['description'].trim() !== '') capabilities.push(firstSentence(tool['description']));
  }
  if (capabilities.length === 0) return;
  semantic['capabilities'] = [...new Set(capabilities)];
  const from = tools.map((tool) => provenance[`tools.${String(tool['name'])}.description`]).find((source) => source !== undefined);
  if (from !== undefined) provenance['semantic.capabilities'] = from;
}

/** A plugin retry policy from the tools' retry safety: retry only when every tool is safe to repeat. */
function deriveRetryPolicy(execution: JsonObject, tools: JsonObject[], provenance: Provenance): void {
  if (execution['retryPolicy'] !== undefined) return;
  const known = tools.filter((tool) => typeof tool['retrySafe'] === 'boolean');
  if (known.length === 0) return;
  const allSafe = known.length === tools.length && known.every((tool) => tool['retrySafe'] === true);
  execution['retryPolicy'] = allSafe ? { maxRetries: 2, backoffMs: 500, backoffMultiplier: 2 } : { maxRetries: 0 };
  const from = provenance[`tools.${String(known[0]!['name'])}.retrySafe`];
  if (from !== undefined) provenance['execution.retryPolicy'] = from;
}

/** The merged document, its provenance and the warnings of the merge. */
export interface MergedDocument {
  document: JsonObject;
  provenance: Provenance;
  warnings: string[];
}

/** Merges source results by precedence (SOURCE_PRECEDENCE) into one PID. */
export function mergeSources(pluginName: string, results: readonly SourceResult[]): MergedDocument {
  const ordered = [...results].sort((a, b) => SOURCE_PRECEDENCE.indexOf(a.source) - SOURCE_PRECEDENCE.indexOf(b.source));
  const provenance: Provenance = {};
  const warnings: string[] = [];
  const sections: Record<'semantic' | 'execution' | 'safety' | 'interoperability', JsonObject> = { semantic: {}, execution: {}, safety: {}, interoperability: {} };
  const tools = new Map<string, JsonObject>();
  const served = ordered.find((result) => result.source === 'mcp');
  const servedNames = served === undefined ? undefined : new Set(Object.keys(served.partial.tools));
  for (const result of ordered) {
    for (const section of ['semantic', 'execution', 'safety', 'interoperability'] as const) {
      const value = result.partial[section];
      if (isObject(value)) fill(sections[section], value, result.source, section, provenance);
    }
    for (const [name, definition] of Object.entries(result.partial.tools)) {
      if (servedNames !== undefined && !servedNames.has(name)) {
        warnings.push(`${result.source}: tool '${name}' is not served by the plugin (MCP discovery); its definition is ignored`);
        continue;
      }
      let tool = tools.get(name);
      if (tool === undefined) {
        tool = { name };
        tools.set(name, tool);
      }
      fill(tool, definition, result.source, `tools.${name}`, provenance);
    }
  }
  const toolList = [...tools.values()].sort((a, b) => (String(a['name']) < String(b['name']) ? -1 : 1));
  deriveCapabilities(sections.semantic, toolList, provenance);
  deriveRetryPolicy(sections.execution, toolList, provenance);
  const document: JsonObject = { version: PID_SCHEMA_VERSION, pluginId: pluginName };
  for (const [section, value] of Object.entries(sections)) if (Object.keys(value).length > 0) document[section] = value;
  document['tools'] = toolList;
  return { document, provenance, warnings };
}
