/**
 * Concept-lexicon query expansion (src/retrieval/concepts.ts): requests worded differently
 * from a tool's description still find it. The catalog is @modelcontextprotocol/server-memory's
 * nine tools with their upstream descriptions.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { relatedTerms } from '../../src/retrieval/concepts.ts';
import { createRetrievalIndex } from '../../src/retrieval/retrieval-index.ts';
import { stem } from '../../src/retrieval/tokenizer.ts';

const memoryTools: [string, string][] = [
  ['create_entities', 'Create multiple new entities in the knowledge graph'],
  ['create_relations', 'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice'],
  ['add_observations', 'Add new observations to existing entities in the knowledge graph'],
  ['delete_entities', 'Delete multiple entities and their associated relations from the knowledge graph'],
  ['delete_observations', 'Delete specific observations from entities in the knowledge graph'],
  ['delete_relations', 'Delete multiple relations from the knowledge graph'],
  ['read_graph', 'Read the entire knowledge graph'],
  ['search_nodes', 'Search for nodes in the knowledge graph based on a query'],
  ['open_nodes', 'Open specific nodes in the knowledge graph by their names'],
];

async function memoryIndex(conceptWeight?: number) {
  const index = createRetrievalIndex(conceptWeight === undefined ? {} : { options: { conceptWeight } });
  await index.build(memoryTools.map(([id, description]) => ({ id, name: id, description })));
  return index;
}

describe('concept expansion', () => {
  it('finds a memory-writing tool for "remember that Alice prefers tea"', async () => {
    const top = (await (await memoryIndex()).search('remember that Alice prefers tea', { k: 3 })).results.map((r) => r.id);
    assert.ok(top.some((id) => id === 'add_observations' || id === 'create_entities'), `top 3: ${top.join(', ')}`);
    // Without expansion nothing in the request matches the catalog.
    assert.deepEqual((await (await memoryIndex(0)).search('remember that Alice prefers tea', { k: 3 })).results, []);
  });

  it('maps "look up" to search and "erase" to delete', async () => {
    const index = await memoryIndex();
    assert.equal((await index.search('look up Alice', { k: 1 })).results[0]?.id, 'search_nodes');
    assert.match((await index.search('erase everything about Bob', { k: 1 })).results[0]?.id ?? '', /^delete_/);
  });

  it('never expands function words on their own, but matches phrases that contain them', () => {
    const stems = (text: string) => text.split(' ').map((word) => stem(word));
    assert.equal(relatedTerms(stems('up'), () => false).size, 0);
    assert.ok(relatedTerms(stems('look up'), () => false).has(stem('search')));
    assert.ok(relatedTerms(stems('mail'), () => true).has(stem('email')));
  });
});
