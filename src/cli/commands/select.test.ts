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

  it('validates its arguments and reports a missing engine', async () => {
    await assert.rejects(selectCommand.run(context({}, [], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({ k: 'many' }, ['x'], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({ provider: 'cohere' }, ['x'], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(selectCommand.run(context({}, ['x'], false, false)), (e) => isQuiverError(e, 'unavailable'));
    await assert.rejects(outcomeCommand.run(context({}, [], false)), (e) => isQuiverError(e, 'invalid_input'));
    await assert.rejects(outcomeCommand.run(context({ failed: true }, ['00000000-0000-0000-0000-000000000000'], false)), (e) => isQuiverError(e, 'not_found'));
  });
});
