/**
 * Action intent (src/retrieval/retrieval-index/action-intent.ts): a removal tool does not win a
 * request that adds or records something. The catalog is the real tools/list of
 * server-memory, server-filesystem and server-everything (test/fixtures/retrieval), turned
 * into retrieval documents the way the hub does (`toDocument`: qualified names, plugin name,
 * MCP annotations); the requests were written by hand as a user would word them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRetrievalIndex } from '../../src/retrieval/retrieval-index.ts';
import { isRemovalTool } from '../../src/retrieval/retrieval-index/action-intent.ts';
import { documentSignature, toDocument } from '../../src/selection/engine/catalog.ts';
import type { SelectionCandidate } from '../../src/store/repositories/candidates.ts';

interface FixtureTool { name: string; description?: string; annotations?: Record<string, unknown>; inputSchema: Record<string, unknown> }
interface LabelledQuery { query: string; want: string[]; over: string[] }
const fixture = JSON.parse(readFileSync(new URL('../fixtures/retrieval/real-mcp-tools.json', import.meta.url), 'utf8')) as {
  servers: Record<string, { tools: FixtureTool[] }>;
  queries: LabelledQuery[];
};

/** The hub's retrieval document of each fixture tool (id = the tool's own name, unique across the three servers). */
const candidates = Object.entries(fixture.servers).flatMap(([plugin, { tools }]) =>
  tools.map(
    (tool) =>
      ({
      id: tool.name, name: tool.name, qualifiedName: `${plugin}__${tool.name}`, displayName: null, pluginId: null, pluginName: plugin,
      orgId: null, categoryId: null, categoryName: null, description: tool.description ?? '', parameters: tool.inputSchema,
      summary: null, tags: [], whenToUse: [], whenNotToUse: [], exampleQueries: [], isAlwaysPinned: false, pinWeight: 0,
      contentHash: tool.name, annotations: tool.annotations ?? null, visibility: 'on-demand',
      }) as SelectionCandidate,
  ),
);
const documents = candidates.map(toDocument);

async function ranked(query: string, removalPenalty?: number): Promise<string[]> {
  const index = createRetrievalIndex(removalPenalty === undefined ? {} : { options: { removalPenalty } });
  await index.build(documents);
  return (await index.search(query, { k: documents.length })).results.map((result) => result.id);
}

/** What is wrong with a ranking for a labelled request, or undefined when it is as a user expects. */
function problem(ranking: string[], { want, over }: LabelledQuery): string | undefined {
  const best = Math.min(...want.map((id) => (ranking.includes(id) ? ranking.indexOf(id) : Infinity)));
  if (best >= 3) return `none of ${want.join(', ')} in the top 3: ${ranking.slice(0, 3).join(', ')}`;
  const above = over.filter((id) => ranking.includes(id) && ranking.indexOf(id) < best);
  return above.length > 0 ? `${above.join(', ')} above ${ranking[best]}: ${ranking.slice(0, 4).join(', ')}` : undefined;
}

describe('action intent: additive and removal requests over real MCP tools', () => {
  for (const labelled of fixture.queries) {
    it(`"${labelled.query}" → ${labelled.want.join(' | ')}`, async () => {
      assert.equal(problem(await ranked(labelled.query), labelled), undefined);
    });
  }

  it('the labelled set depends on the demotion: without it the additive requests lose to delete_observations', async () => {
    const failing: string[] = [];
    for (const labelled of fixture.queries) if (problem(await ranked(labelled.query, 0), labelled)) failing.push(labelled.query);
    assert.ok(failing.includes('remember a fact about a person in the knowledge graph'), failing.join(' / '));
    assert.ok(failing.length >= 4, failing.join(' / '));
  });

  it('demotes, never hides: every tool is still ranked, and a request naming a removal tool gets it first', async () => {
    assert.equal((await ranked('remember that Alice prefers tea')).includes('delete_observations'), true);
    assert.equal((await ranked('delete_observations for Alice'))[0], 'delete_observations');
  });
});

describe('which tools remove', () => {
  const byName = new Map(documents.map((document) => [document.id, document]));
  it('delete_* tools remove; writers the annotations call destructive (overwrite, edit, move) do not', () => {
    for (const id of ['delete_entities', 'delete_observations', 'delete_relations']) assert.equal(isRemovalTool(byName.get(id)!), true, id);
    for (const id of ['write_file', 'edit_file', 'move_file', 'create_entities', 'read_graph']) assert.equal(isRemovalTool(byName.get(id)!), false, id);
    assert.equal(byName.get('write_file')!.actionHints?.destructive, true);
  });

  it('a description that starts with a removal verb counts; read-only or non-destructive annotations veto', () => {
    assert.equal(isRemovalTool({ id: 'a', name: 'prune_cache', description: 'Purges stale entries from the cache' }), true);
    assert.equal(isRemovalTool({ id: 'b', name: 'delete_preview', description: 'Shows what a delete would remove', actionHints: { readOnly: true } }), false);
    assert.equal(isRemovalTool({ id: 'c', name: 'remove_duplicates_view', description: 'x', actionHints: { destructive: false } }), false);
  });

  it('a tool whose annotations change is re-indexed (annotations are not in the content hash)', () => {
    const tool = candidates.find((candidate) => candidate.id === 'delete_entities')!;
    const declared = { ...tool, annotations: { ...tool.annotations, destructiveHint: false } };
    assert.notEqual(documentSignature(declared), documentSignature(tool));
    assert.equal(isRemovalTool(toDocument(declared)), false);
  });
});
