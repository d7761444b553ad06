/**
 * @module intelligence/apply
 * Generated example requests reach retrieval (issue #14): each tool's `exampleRequests` are
 * added to its catalog `exampleQueries` (the lexical example field and Tool2Vec's input), after
 * the examples the author wrote. The requests a previous generation added are replaced, never
 * piled up; the author's own examples are never removed. A catalog update versions the tool
 * and marks its embedding stale, so vectors follow.
 */
import type { CatalogService } from '../catalog/index.ts';
import type { ToolRecord } from '../core/tool.ts';
import type { JsonObject } from './types.ts';

/** The catalog's bound on example queries per tool (core/tool.ts). */
const MAX_EXAMPLE_QUERIES = 500;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '') : []);

/** Writes the generated example requests onto the plugin's catalog tools; returns what each tool got from this generation. */
export async function applyExampleRequests(
  catalog: Pick<CatalogService, 'updateTool'>,
  tools: readonly ToolRecord[],
  document: JsonObject,
  previouslyApplied: Readonly<Record<string, string[]>>,
): Promise<{ applied: Record<string, string[]>; updatedTools: number }> {
  const generated = new Map<string, string[]>();
  for (const tool of (document['tools'] ?? []) as JsonObject[]) generated.set(String(tool['name']), strings(tool['exampleRequests']));
  const applied: Record<string, string[]> = {};
  let updatedTools = 0;
  for (const tool of tools) {
    const previous = new Set((previouslyApplied[tool.name] ?? []).map((text) => text.toLowerCase()));
    const base = tool.exampleQueries.filter((text) => !previous.has(text.toLowerCase()));
    const seen = new Set(base.map((text) => text.toLowerCase()));
    const added: string[] = [];
    for (const request of generated.get(tool.name) ?? []) {
      const key = request.trim().toLowerCase();
      if (seen.has(key) || base.length + added.length >= MAX_EXAMPLE_QUERIES) continue;
      seen.add(key);
      added.push(request.trim().slice(0, 1_000));
    }
    const next = [...base, ...added];
    if (added.length > 0) applied[tool.name] = added;
    if (next.length === tool.exampleQueries.length && next.every((text, index) => text === tool.exampleQueries[index])) continue;
    await catalog.updateTool(tool.id, { exampleQueries: next });
    updatedTools++;
  }
  return { applied, updatedTools };
}
