/**
 * Issue #28, "what grows with 10,000 tools": the o200k tokenizer (~20 MB of the server's heap)
 * is not loaded to count a catalog whose tools were synced. Counts are stored per tool and
 * provider format at sync (migration 0113), keyed by a hash of the exact JSON counted; a
 * restarted process selects with them alone; a JSON without a stored count (a tool created
 * otherwise, a description changed behind the sync) is counted and written back. Both databases.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createScratchDatabase, describeEachBackend, type ScratchDatabase } from '../helpers/backends.ts';
import { openStore } from '../../src/store/open.ts';
import type { Database } from '../../src/store/database.ts';
import { createCatalogService } from '../../src/catalog/index.ts';
import { createSelectionEngine } from '../../src/selection/index.ts';
import { countJsonTokens, countTokens } from '../../src/core/tokens.ts';
import { listActiveCandidates } from '../../src/store/repositories/candidates.ts';
import { PROVIDERS, type SelectionProvider } from '../../src/selection/provider-formats.ts';
import { canonicalJson } from '../../src/core/hash.ts';
import { formattedJson, MCP_DEFINITION, mcpDefinition, storeToolTokenCounts, tokenCountKey } from '../../src/selection/token-counts.ts';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('../helpers/selection-restart-child.ts', import.meta.url));

function tools(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    name: `lookup_${i}`,
    description: `Looks up contact number ${i} by e-mail address, with its company and deals`,
    // With `$schema`, as the MCP SDKs' zod-made schemas carry it: the `mcp` format drops it, the
    // gateway's definition keeps it, so the two texts (and stored counts) differ.
    parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { email: { type: 'string', description: 'The address' }, limit: { type: 'integer' } }, required: ['email'] },
  }));
}

/** The catalog totals a tokenizer gives for the active tools, per provider. */
async function expectedTotals(db: Database): Promise<Record<SelectionProvider, number>> {
  const candidates = await listActiveCandidates(db);
  return Object.fromEntries(PROVIDERS.map((p) => [p, candidates.reduce((sum, tool) => sum + countTokens(formattedJson(tool, p)), 0)])) as Record<SelectionProvider, number>;
}

describeEachBackend('stored token counts (issue #28)', (backend) => {
  let folder: string;
  let scratch: ScratchDatabase | undefined;
  let location: Parameters<typeof openStore>[0];

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-token-counts-'));
    if (backend.name === 'postgres') {
      scratch = await createScratchDatabase();
      location = { kind: 'postgres', url: scratch.url };
    } else {
      location = { kind: 'folder', path: join(folder, 'data') };
    }
  });
  after(async () => {
    await scratch?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a sync stores the count of every provider format of its new and changed tools', async () => {
    const { db } = await openStore(location);
    try {
      const catalog = createCatalogService({ db, afterSync: storeToolTokenCounts });
      await catalog.syncPlugin({ pluginId: 'crm', version: '1.0.0', tools: tools(30) });
      const { rows } = await db.query<{ tool_id: string; provider: string; json_key: number; tokens: number }>('SELECT tool_id, provider, json_key, tokens FROM tool_token_counts');
      const candidates = await listActiveCandidates(db);
      assert.equal(candidates.length, 30);
      assert.equal(rows.length, 30 * (PROVIDERS.length + 1), 'every provider format and the MCP definition');
      const byTool = new Map(candidates.map((tool) => [tool.id, tool]));
      for (const row of rows) {
        const tool = byTool.get(row.tool_id)!;
        const json = row.provider === MCP_DEFINITION ? canonicalJson(mcpDefinition(tool)) : formattedJson(tool, row.provider as SelectionProvider);
        assert.equal(Number(row.json_key), tokenCountKey(json));
        assert.equal(row.tokens, countTokens(json));
      }
      // A changed tool is counted again: its row now holds the new text's key.
      const changed = tools(30);
      changed[0]!.description = 'Finds a contact by e-mail address; the new wording is longer than the old one was';
      await catalog.syncPlugin({ pluginId: 'crm', version: '1.0.1', tools: changed });
      const tool = (await listActiveCandidates(db)).find((t) => t.name === 'lookup_0')!;
      const stored = await db.query<{ json_key: number; tokens: number }>("SELECT json_key, tokens FROM tool_token_counts WHERE tool_id = $1 AND provider = 'openai'", [tool.id]);
      assert.equal(Number(stored.rows[0]!.json_key), tokenCountKey(formattedJson(tool, 'openai')));
      assert.equal(stored.rows[0]!.tokens, countTokens(formattedJson(tool, 'openai')));
    } finally {
      await db.close();
    }
  });

  it('a restarted process selects (and counts MCP definitions) with the stored counts and never loads the tokenizer', async () => {
    let expected: Record<SelectionProvider, number>;
    let definitions: number;
    {
      const { db } = await openStore(location);
      expected = await expectedTotals(db);
      const candidates = await listActiveCandidates(db);
      assert.ok(candidates.every((tool) => canonicalJson(mcpDefinition(tool)).includes('$schema')), 'the definitions carry $schema');
      definitions = candidates.reduce((sum, tool) => sum + countJsonTokens(mcpDefinition(tool)), 0);
      await db.close();
    }
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(location)], { env: { ...process.env, QUIVER_LOG_LEVEL: 'silent' }, timeout: 120_000 });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { catalog: Record<string, number>; definitions: number; tokenizerLoaded: boolean };
    assert.deepEqual(report.catalog, expected);
    assert.equal(report.definitions, definitions);
    assert.equal(report.tokenizerLoaded, false, 'the restarted selection loaded gpt-tokenizer');
  });

  it('a text with no stored count is counted with the tokenizer and written back', async () => {
    const { db } = await openStore(location);
    try {
      // A tool created outside a sync (no count stored) and a description changed behind the
      // sync's back (its stored count is for the old text: a different key, never used).
      const catalog = createCatalogService({ db });
      const created = await catalog.createTool({ name: 'standalone_lookup', description: 'Looks up an order by its number', parameters: { type: 'object', properties: { order: { type: 'string' } } } });
      const before = (await listActiveCandidates(db)).find((t) => t.name === 'lookup_1')!;
      const staleKey = tokenCountKey(formattedJson(before, 'anthropic'));
      await db.query("UPDATE tools SET description = description || ' (and its recent invoices, overdue or paid)', updated_at = now() WHERE id = $1", [before.id]);
      const expected = await expectedTotals(db);
      const engine = createSelectionEngine({ db, listen: false });
      for (const provider of PROVIDERS) {
        const result = await engine.selectTools({ query: 'look up an order', k: 2, provider, log: false });
        assert.equal(result.metadata.tokens.catalog, expected[provider], provider);
      }
      // A gateway session counts each visible tool's MCP definition the same way.
      const { tools: visible } = await engine.visibleTools({});
      for (const tool of visible) assert.equal(engine.definitionTokens!(tool), countJsonTokens(mcpDefinition(tool)), tool.name);
      await engine.flush();
      await engine.close();
      const after = (await listActiveCandidates(db)).find((t) => t.name === 'lookup_1')!;
      const { rows } = await db.query<{ tool_id: string; provider: string; json_key: number; tokens: number }>(
        "SELECT tool_id, provider, json_key, tokens FROM tool_token_counts WHERE tool_id = ANY($1::uuid[]) AND provider <> 'mcp-definition'",
        [[created.id, before.id]],
      );
      assert.equal(rows.length, 2 * PROVIDERS.length);
      const createdNow = (await listActiveCandidates(db)).find((t) => t.id === created.id)!;
      for (const row of rows) {
        const tool = row.tool_id === before.id ? after : createdNow;
        const json = formattedJson(tool, row.provider as SelectionProvider);
        assert.equal(Number(row.json_key), tokenCountKey(json));
        assert.equal(row.tokens, countTokens(json));
        assert.notEqual(Number(row.json_key), staleKey);
      }
      // Their MCP definitions too, so the next process counts a session's tools without the
      // tokenizer. (A definition without $schema is the \`mcp\` format's text: that row's key serves.)
      const storedKeys = new Set((await db.query<{ json_key: number }>('SELECT json_key FROM tool_token_counts')).rows.map((row) => Number(row.json_key)));
      for (const tool of [after, createdNow]) {
        assert.ok(storedKeys.has(tokenCountKey(canonicalJson(mcpDefinition(tool)))), `${tool.name}'s definition count was written back`);
      }
    } finally {
      await db.close();
    }
  });
});
