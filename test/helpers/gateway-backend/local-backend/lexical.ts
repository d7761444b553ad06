/**
 * @module test/helpers/gateway-backend/local-backend/lexical
 * The test backend's plain search: lowercase words (camelCase and snake_case split, naive
 * plural folding, a few stop words), a term-count document per tool with its name counted
 * three times, BM25 (k1 1.2, b 0.75) over the candidates the session may see, and a word
 * overlap count for marketplace suggestions. Not the production retrieval (`src/retrieval`).
 */
import type { GatewayTool, MarketplaceSuggestion } from '../../../../src/gateway/backend.ts';

const STOPWORDS = new Set(['a', 'an', 'the', 'to', 'of', 'for', 'and', 'or', 'in', 'on', 'with', 'by', 'is', 'it', 'me', 'my', 'i', 'from', 'that', 'this', 'be', 'as', 'at', 'some', 'can', 'you', 'want', 'need', 'please']);

/** Lowercase words, camelCase and snake_case split, naive plural folding. */
export function lexicalTokens(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !STOPWORDS.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

/** The search document of a tool: its words and their counts. */
export interface SearchDocument {
  counts: Map<string, number>;
  length: number;
}

/** Builds a tool's search document from its name, title, description, parameters and plugin title and tags. */
export function toolDocument(
  tool: { name: string; title?: string | undefined; description?: string | undefined; inputSchema: unknown },
  plugin: { title?: string | undefined; tags?: readonly string[] | undefined } | undefined,
): SearchDocument {
  // Name words count three times: a tool's name is its strongest signal.
  const words = [
    ...lexicalTokens(tool.name),
    ...lexicalTokens(tool.name),
    ...lexicalTokens(tool.name),
    ...lexicalTokens(`${tool.title ?? ''} ${tool.description ?? ''} ${schemaText(tool.inputSchema)}`),
    ...lexicalTokens(`${plugin?.title ?? ''} ${(plugin?.tags ?? []).join(' ')}`),
  ];
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return { counts, length: words.length };
}

/** Parameter names and descriptions of a JSON Schema's top-level properties. */
function schemaText(schema: unknown): string {
  const properties = (schema as { properties?: Record<string, { description?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .map(([key, property]) => `${key} ${typeof property?.description === 'string' ? property.description : ''}`)
    .join(' ');
}

/** BM25 over the candidates: the `limit` best with a positive score, best first, ties by name. */
export function rankTools(
  candidates: readonly GatewayTool[],
  terms: readonly string[],
  documentOf: (tool: GatewayTool) => SearchDocument | undefined,
  limit: number,
): Array<{ tool: GatewayTool; score: number }> {
  const countsOf = (tool: GatewayTool) => documentOf(tool)?.counts ?? new Map<string, number>();
  const lengthOf = (tool: GatewayTool) => documentOf(tool)?.length ?? 0;
  const averageLength = candidates.reduce((sum, tool) => sum + lengthOf(tool), 0) / Math.max(1, candidates.length);
  const documentFrequency = new Map<string, number>();
  for (const term of terms) documentFrequency.set(term, candidates.filter((tool) => countsOf(tool).has(term)).length);
  const k1 = 1.2;
  const b = 0.75;
  return candidates
    .map((tool) => {
      const counts = countsOf(tool);
      let score = 0;
      for (const term of terms) {
        const frequency = counts.get(term) ?? 0;
        if (frequency === 0) continue;
        const df = documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (candidates.length - df + 0.5) / (df + 0.5));
        score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * lengthOf(tool)) / Math.max(1, averageLength)));
      }
      return { tool, score };
    })
    .filter((entry) => entry.score > 0)
    .sort((x, y) => y.score - x.score || x.tool.qualifiedName.localeCompare(y.tool.qualifiedName))
    .slice(0, limit);
}

/** Marketplace entries by how many query words they share (entries with none left out), at most `limit`. */
export function rankMarketplace(entries: readonly MarketplaceSuggestion[], query: string, limit: number): MarketplaceSuggestion[] {
  const terms = new Set(lexicalTokens(query));
  return entries
    .map((entry) => ({
      entry,
      score: lexicalTokens(`${entry.name} ${entry.title} ${entry.summary} ${(entry.tools ?? []).join(' ')} ${entry.category ?? ''}`).filter((word) => terms.has(word)).length,
    }))
    .filter((scored) => scored.score > 0)
    .sort((x, y) => y.score - x.score)
    .slice(0, limit)
    .map((scored) => scored.entry);
}
