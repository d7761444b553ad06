/**
 * Trust in the real selection engine (issue #10), on every backend: of two equally relevant
 * tools, the one whose plugin has the lower trust factor ranks below, whatever the bandit's seed.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { setEnablement } from '../../store/repositories/enablement.ts';
import { createSelectionEngine } from '../engine.ts';
import { createSeededRandom } from '../random.ts';
import { addTool } from '../test-fixtures.ts';

describeEachBackend('trust in the selection ranking', (backend) => {
  let db: Database;
  const plugins: Record<string, string> = {};

  before(async () => {
    db = await backend.open();
    const workspaceId = (await db.query<{ id: string }>(`SELECT id FROM workspaces WHERE name = 'default'`)).rows[0]!.id;
    for (const name of ['solid', 'shady']) {
      plugins[name] = (await db.query<{ id: string }>('INSERT INTO plugins (name, description) VALUES ($1, $1) RETURNING id', [name])).rows[0]!.id;
      await setEnablement(db, { pluginId: plugins[name]!, workspaceId, enabled: true });
      await addTool(db, { name: 'convert_currency', description: 'Convert an amount of money from one currency to another', pluginId: plugins[name]! });
    }
  });
  after(async () => {
    await db.close();
  });

  async function order(seed: number, factor: (pluginId: string) => number): Promise<Array<{ name: string; score: number }>> {
    const engine = createSelectionEngine({ db, random: createSeededRandom(seed), bandit: { relevanceStrength: 1000, exploration: false }, trustFactor: factor, listen: false });
    try {
      const result = await engine.selectTools({ query: 'convert money to another currency', k: 2, log: false });
      return result.tools.map((tool) => ({ name: tool.qualifiedName, score: tool.score }));
    } finally {
      await engine.close();
    }
  }

  it('ranks the low-trust tool below its equally relevant high-trust twin, for every seed', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const low = await order(seed, (pluginId) => (pluginId === plugins.shady ? 0.7 : 1));
      assert.deepEqual(low.map((tool) => tool.name), ['solid__convert_currency', 'shady__convert_currency'], `seed ${seed}`);
      assert.ok(low[1]!.score < low[0]!.score);
      const flipped = await order(seed, (pluginId) => (pluginId === plugins.solid ? 0.7 : 1));
      assert.deepEqual(flipped.map((tool) => tool.name), ['shady__convert_currency', 'solid__convert_currency'], `seed ${seed}, flipped`);
    }
  });
});
