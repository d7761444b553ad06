/**
 * The vector pass pools every candidate for a request whose words the catalog barely has
 * (src/retrieval/retrieval-index/vector-pass.ts). With the shipped token table the pool was
 * the 30 best lexical hits only, so a request sharing no word with server-memory's tools
 * ("what do you know about Bob") scored every tool 0 and came back in name order.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRetrievalIndex } from '../../src/retrieval/retrieval-index.ts';
import { createTokenTableEmbedder } from '../../src/retrieval/embedders/token-table.ts';
import { toDocument } from '../../src/selection/engine/catalog.ts';
import type { SelectionCandidate } from '../../src/store/repositories/candidates.ts';

interface FixtureTool { name: string; description?: string; annotations?: Record<string, unknown>; inputSchema: Record<string, unknown> }
const fixture = JSON.parse(readFileSync(new URL('../fixtures/retrieval/real-mcp-tools.json', import.meta.url), 'utf8')) as {
  servers: Record<string, { tools: FixtureTool[] }>;
};

/** server-memory's real tools as the hub's retrieval documents. */
const documents = fixture.servers.memory!.tools.map((tool) =>
  toDocument({
    id: tool.name, name: tool.name, qualifiedName: `server-memory__${tool.name}`, displayName: null, pluginId: null, pluginName: 'server-memory',
    orgId: null, categoryId: null, categoryName: null, description: tool.description ?? '', parameters: tool.inputSchema,
    summary: null, tags: [], whenToUse: [], whenNotToUse: [], exampleQueries: [], isAlwaysPinned: false, pinWeight: 0,
    contentHash: tool.name, annotations: tool.annotations ?? null, visibility: 'on-demand',
  } as SelectionCandidate),
);

describe('vector pool for requests the catalog has no words for', () => {
  it('ranks every tool by meaning when no tool matches a word of the request', async () => {
    const embedder = createTokenTableEmbedder();
    // Without the removal tools' demotion (action-intent.ts), the order is the vectors' alone.
    const index = createRetrievalIndex({ embedder, options: { removalPenalty: 0 } });
    await index.build(documents);
    const query = 'what do you know about Bob';
    const { results } = await index.search(query, { k: documents.length });
    assert.equal(results.length, documents.length);
    assert.ok(results.every((r) => r.lexicalRank === undefined), 'no lexical match: the request is one the vectors must carry');
    assert.ok(results.every((r) => r.score > 0), `every tool scored by similarity: ${results.map((r) => `${r.id} ${r.score}`).join(', ')}`);
    // The order is the similarity order of the request and each tool's own vector.
    const similarity = new Map(results.map((r) => [r.id, r.vectorRank]));
    assert.deepEqual(
      results.map((r) => r.id),
      [...results].sort((a, b) => similarity.get(a.id)! - similarity.get(b.id)!).map((r) => r.id),
    );
    await embedder.close?.();
  });
});
