/**
 * @module intelligence/sources/author
 * What the plugin's author (or an admin) wrote: the intelligence document shipped in
 * quiver.json or put by an admin, and the manifest (seed 002). It has the highest precedence:
 * inference never overrides a plugin's own words. Manifest `whenToUse` become use cases,
 * `whenNotToUse` anti-patterns, tags related concepts, and each manifest example's user message
 * an example request of the tool it names. A document Quiver generated itself is not an
 * author source (it would feed generation its own output).
 */
import { contentHash } from '../../core/hash.ts';
import type { JsonObject, PartialPid, SourceResult } from '../types.ts';

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '') : []);

/** The author's PID as a partial (tools keyed by name). */
function fromPid(pid: JsonObject, partial: PartialPid): void {
  for (const section of ['semantic', 'execution', 'safety', 'interoperability'] as const) {
    if (isObject(pid[section])) partial[section] = structuredClone(pid[section]);
  }
  for (const tool of Array.isArray(pid['tools']) ? pid['tools'] : []) {
    if (isObject(tool) && typeof tool['name'] === 'string' && partial.tools[tool['name']] === undefined) partial.tools[tool['name']] = structuredClone(tool);
  }
}

/** Manifest fields the PID lacks, in PID terms. */
function fromManifest(pluginName: string, manifest: JsonObject, partial: PartialPid): void {
  const semantic: JsonObject = { ...(partial.semantic ?? {}) };
  const useCases = strings(manifest['whenToUse']).map((scenario) => ({ scenario }));
  if (semantic['useCases'] === undefined && useCases.length > 0) semantic['useCases'] = useCases;
  const antiPatterns = strings(manifest['whenNotToUse']);
  if (semantic['antiPatterns'] === undefined && antiPatterns.length > 0) semantic['antiPatterns'] = antiPatterns;
  const concepts = [...strings(manifest['tags']), ...strings([manifest['category']])];
  if (semantic['relatedConcepts'] === undefined && concepts.length > 0) semantic['relatedConcepts'] = concepts;
  if (semantic['domainContext'] === undefined && typeof manifest['summary'] === 'string' && manifest['summary'].trim() !== '') semantic['domainContext'] = [manifest['summary']];
  if (Object.keys(semantic).length > 0) partial.semantic = semantic;
  for (const example of Array.isArray(manifest['examples']) ? manifest['examples'] : []) {
    if (!isObject(example) || typeof example['tool'] !== 'string' || typeof example['user'] !== 'string') continue;
    const tool = example['tool'].startsWith(`${pluginName}__`) ? example['tool'].slice(pluginName.length + 2) : example['tool'];
    const definition = (partial.tools[tool] ??= { name: tool });
    const requests = strings(definition['exampleRequests']);
    if (!requests.includes(example['user'])) definition['exampleRequests'] = [...requests, example['user']];
  }
}

/** The author source, or undefined when the plugin ships neither a document nor a manifest. */
export function authorSource(pluginName: string, author: { pid?: JsonObject | undefined; manifest?: JsonObject | undefined }): SourceResult | undefined {
  if (author.pid === undefined && author.manifest === undefined) return undefined;
  const partial: PartialPid = { tools: {} };
  if (author.pid !== undefined) fromPid(author.pid, partial);
  if (author.manifest !== undefined) fromManifest(pluginName, author.manifest, partial);
  return { source: 'author', inputHash: contentHash({ pid: author.pid ?? null, manifest: author.manifest ?? null }), partial, warnings: [] };
}
