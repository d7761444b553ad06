/**
 * What one learned call costs the embedded database (issue #28): every statement, `begin` and
 * `end` is a message to PGlite's thread and back (structured cloning both ways). Counted here
 * as the messages the main thread sends, through the real thread and the app's quarantine check
 * (trust/pinning reads tool_pins), so the figure is the one a server pays; no timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../store/database.ts';
import { openStore } from '../../store/open.ts';
import { PGliteThread, type PGliteRequest } from '../../store/pglite-thread.ts';
import { isToolQuarantined } from '../../store/repositories/tool-pins.ts';
import { setLearningBlocked } from '../../store/repositories/learned-examples.ts';
import { recordTransitions } from '../../store/repositories/learned-transitions.ts';
import { addTool } from '../test-fixtures.ts';
import { captureObservation, teachMissed } from './capture.ts';
import { defaultLearningSettings } from './settings.ts';

describe('learning capture: round trips to the embedded database (issue #28)', () => {
  let db: Database;
  let sent: PGliteRequest['op'][] | undefined;
  const request = PGliteThread.prototype.request;
  before(async () => {
    ({ db } = await openStore({ kind: 'memory' }));
    PGliteThread.prototype.request = function counted<Result>(this: PGliteThread, message: PGliteRequest): Promise<Result> {
      sent?.push(message.op);
      return request.call(this, message) as Promise<Result>;
    };
  });
  after(async () => {
    PGliteThread.prototype.request = request;
    await db.close();
  });

  /** The ops sent to the thread while `work` ran. */
  async function counting<T>(work: () => Promise<T>): Promise<{ result: T; ops: PGliteRequest['op'][] }> {
    sent = [];
    try {
      const result = await work();
      return { result, ops: sent };
    } finally {
      sent = undefined;
    }
  }

  const deps = () => ({ db, settings: { ...defaultLearningSettings, perToolCap: 3 }, clock: () => new Date(), isQuarantined: (toolId: string) => isToolQuarantined(db, toolId) });
  const observation = (toolIds: string[], query = 'convert my dollars to yen please') => ({
    eventId: 'e',
    source: 'api' as const,
    request: { query, orgId: 'org-rt', userId: 'u1', sessionId: 's1' },
    calledToolIds: toolIds,
    success: true,
    flaggedToolIds: [],
  });

  it('a learned call: the quarantine read and one message for block check, write and trims', async () => {
    const toolId = await addTool(db, { name: 'rt_convert', description: 'convert currencies' });
    const { result, ops } = await counting(() => captureObservation(deps(), observation([toolId])));
    assert.deepEqual(result.learned, [toolId]);
    assert.deepEqual(result.skipped, []);
    assert.equal(result.written.length, 1);
    assert.equal(result.written[0]!.toolId, toolId);
    // Before: quarantine query, block query, begin, upsert, trim, end (6).
    assert.deepEqual(ops, ['query', 'batch']);
  });

  it('a blocked tool: the same two messages, nothing written, reported blocked', async () => {
    const toolId = await addTool(db, { name: 'rt_blocked', description: 'a blocked tool' });
    await setLearningBlocked(db, null, toolId, true);
    const { result, ops } = await counting(() => captureObservation(deps(), observation([toolId])));
    assert.deepEqual(result, { ...result, learned: [], skipped: ['blocked'], written: [], removed: [] });
    assert.deepEqual(ops, ['query', 'batch']);
    assert.equal((await db.query('SELECT 1 FROM learned_examples WHERE tool_id = $1', [toolId])).rows.length, 0);
  });

  it('a quarantined (here: unknown) tool: only the quarantine read', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const { result, ops } = await counting(() => captureObservation(deps(), observation([unknown])));
    assert.deepEqual(result.skipped, ['quarantined']);
    assert.deepEqual(ops, ['query']);
  });

  it('a taught miss: one message per example written, caps applied', async () => {
    const toolId = await addTool(db, { name: 'rt_missed', description: 'a tool found late' });
    const found = await captureObservation(deps(), observation([toolId], 'find the tool that was missed'));
    const misses = [1, 2, 3].map((i) => ({ text: `an earlier wording number ${i}`, textKey: `an earlier wording number ${i}`, at: Date.now() }));
    const { result, ops } = await counting(() => teachMissed(deps(), found, 'api', misses));
    assert.deepEqual(result.learned, [toolId, toolId, toolId]);
    assert.deepEqual(ops, ['batch', 'batch', 'batch']);
    // perToolCap 3, one contributor: its share (ceil(0.34 × 3) = 2 by default settings' share) trims.
    const left = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM learned_examples WHERE tool_id = $1', [toolId])).rows[0]!.n;
    assert.equal(left, 4 - result.removed.length);
    assert.ok(result.removed.length > 0, 'the caps trimmed in the same message');
  });

  it("a session's next call: its \"called after\" transitions (writes and trims) are one message", async () => {
    const [a, b, c] = await Promise.all(['rt_a', 'rt_b', 'rt_c'].map((name) => addTool(db, { name, description: `tool ${name}` })));
    const at = new Date();
    const writes = [
      { orgScope: 'org-rt', fromTool: a!, toTool: c!, contributor: 'user:u1', at },
      { orgScope: 'org-rt', fromTool: b!, toTool: c!, contributor: 'user:u1', at },
    ];
    const { ops } = await counting(() => recordTransitions(db, writes, { perTool: 1 }));
    // Before: begin, two writes, two trims (one per from tool), end (6).
    assert.deepEqual(ops, ['batch']);
    const rows = (await db.query<{ from_tool: string; to_tool: string }>("SELECT from_tool, to_tool FROM learned_transitions WHERE org_scope = 'org-rt' ORDER BY from_tool")).rows;
    assert.deepEqual(rows.map((row) => `${row.from_tool}>${row.to_tool}`).sort(), [`${a}>${c}`, `${b}>${c}`].sort());
  });
});
