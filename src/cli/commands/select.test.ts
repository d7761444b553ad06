import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../store/database.ts';
import { openStore } from '../../store/open.ts';
import type { App } from '../../app.ts';
import { isQuiverError } from '../../core/errors.ts';
import type { CliContext, CliArgs } from '../command.ts';
import { createSelectionEngine, type SelectionEngine } from '../../selection/engine.ts';
import { createSeededRandom } from '../../selection/random.ts';
import { seedFixture } from '../../selection/test-fixtures.ts';
import { outcomeCommand, selectCommand } from './select.ts';

describe('select and outcome commands', () => {
  let db: Database;
  let selection: SelectionEngine;
  before(async () => {
    db = (await openStore({ kind: 'memory' })).db;
    await seedFixture(db);
    selection = createSelectionEngine({ db, random: createSeededRandom(1) });
  });
  after(async () => {
    await selection.close();
    await db.close();
  });

  function context(values: CliArgs['values'], positionals: string[], json: boolean, wired = true): CliContext & { out: string[]; err: string[] } {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      args: { values, positionals },
      io: { stdout: (text) => out.push(text), stderr: (text) => err.push(text) },
      env: {},
      json,
      config: () => {
        throw new Error('not needed');
      },
      openApp: async () => (wired ? ({ selection } as unknown as App) : ({} as App)),
      cwd: process.cwd(),
      readStdin: async () => undefined,
    };
  }

  it('selects and prints JSON, then records the outcome', async () => {
    const run = context({ k: '2', provider: 'anthropic', page: 'contacts', org: 'acme' }, ['crm', 'contact'], true);
    assert.equal(await selectCommand.run(run), 0);
    const result = JSON.parse(run.out.join('')) as { tools: Array<{ qualifiedName: string }>; schemas: Array<Record<string, unknown>>; metadata: { eventId: string } };
    assert.ok(result.tools.some((t) => t.qualifiedName.startsWith('crm__')));
    assert.ok(result.schemas.every((s) => 'input_schema' in s));
    const outcome = context({ called: ['crm__list_contacts,crm__create_contact'] }, [result.metadata.eventId], false);
    assert.equal(await outcomeCommand.run(outcome), 0);
    assert.match(outcome.out.join(''), /recorded success/);
  });

  it('prints a table and the savings line', async () => {
    const run = context({}, ['github', 'issue'], false);
    assert.equal(await selectCommand.run(run), 0);
    const text = run.out.join('');
    assert.match(text, /github__create_issue/);
    assert.match(text, /tokens \(\d+(\.\d+)?% saved, o200k_base\)/);
  });

  it('labels the retrieval score RELEVANCE and says when the bandit ranked against it (issue #26)', async () => {
    const tool = (qualifiedName: string, score: number, reason: string) => ({ qualifiedName, score, reason, tokens: 10 });
    const metadata = { candidateCount: 3, tokens: { sent: 30, catalog: 90, savedPercent: 66, tokenizer: 'o200k_base' }, stageTimingsMs: { total: 1 }, method: 'policy+hybrid+thompson', warnings: [] };
    const printed = async (tools: unknown[]) => {
      const fake = { selectTools: async () => ({ tools, metadata }), flush: async () => {} };
      const run = context({}, ['anything'], false);
      run.openApp = async () => ({ selection: fake }) as unknown as App;
      assert.equal(await selectCommand.run(run), 0);
      return run.out.join('');
    };
    const reordered = await printed([tool('a__pinned', 0, 'pinned'), tool('a__b', 0.5, 'retrieved'), tool('a__c', 0.9, 'retrieved')]);
    assert.match(reordered, /RELEVANCE/);
    assert.match(reordered, /Ranked by the bandit/);
    const inOrder = await printed([tool('a__pinned', 0, 'pinned'), tool('a__c', 0.9, 'retrieved'), tool('a__b', 0.5, 'retrieved')]);
    assert.doesNotMatch(inOrder, /Ranked by the bandit/);
  });

  it('validates its arguments and reports a missing engine', async () => {
    await assert.rejects(selectCommand.run(context({}, [], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({ k: 'many' }, ['x'], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({ provider: 'cohere' }, ['x'], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({}, ['x'], false, false)), (e) => isQuiverError(e, 'unavailable'));
    await assert.rejects(outcomeCommand.run(context({}, [], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(outcomeCommand.run(context({ failed: true }, ['00000000-0000-0000-0000-000000000000'], false)), (e) => isQuiverError(e, 'not_found'));
  });
});
