/**
 * A store one process owns (the embedded default, issue #28): a session's SSE events stay in
 * memory (no `mcp_session_events` row per message) yet replay within the process, bounded by
 * count and age, gone with their session; a queued state is taken once per flush, not per
 * response, and written only when it changed. One body for PGlite and PostgreSQL (a
 * single-process store, `shared: false`, on either).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { createSessionStore, type SessionStore } from '../../src/sessions/index.ts';
import { createMemoryEventStore } from '../../src/sessions/memory-event-store.ts';
import type { Database } from '../../src/store/database.ts';

const limits = { maxSessions: 10, maxSessionsPerKey: 10, maxSessionsPerOrg: 10, idleTtlMs: 60_000 };

const row = (id: string) => ({
  id, identity: { orgId: 'acme' }, identityKey: '{"orgId":"acme"}', owner: { key: 'k', org: 'acme' }, protocolVersion: '2025-06-18', client: {}, state: { v: 1 }, extensions: {},
});

const message = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n } });

/** Replays after `eventId` and returns the ids and progress values sent. */
async function replay(store: SessionStore, sessionId: string, eventId: string): Promise<Array<[string, unknown]>> {
  const sent: Array<[string, unknown]> = [];
  await store.events.forSession(sessionId).replayEventsAfter(eventId, {
    send: async (id, sentMessage) => void sent.push([id, (sentMessage as { params?: { progress?: unknown } }).params?.progress]),
  });
  return sent;
}

describeEachBackend('a single-process session store', (backendUnderTest) => {
  let db: Database;
  let store: SessionStore;

  before(async () => {
    db = await backendUnderTest.open();
    store = createSessionStore({ db, limits, shared: false, touchEveryMs: 60_000 });
    for (const id of ['s1', 's2', 's3']) assert.ok((await store.create(row(id))).admitted);
  });

  after(async () => {
    await store.close();
    await db.close();
  });

  test('keeps SSE events in memory: no rows, replay within the session and stream, gone with the session', async () => {
    const s1 = store.events.forSession('s1');
    const priming = await s1.storeEvent('stream-a', {} as JSONRPCMessage);
    const first = await s1.storeEvent('stream-a', message(1));
    await s1.storeEvent('stream-b', message(99));
    const second = await s1.storeEvent('stream-a', message(2));
    const other = await store.events.forSession('s2').storeEvent('stream-a', message(7));
    const { rows } = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM mcp_session_events');
    assert.equal(Number(rows[0]!.n), 0, 'no event row was written');
    assert.ok(Number(first) > Number(priming) && Number(other) > Number(second), 'ids increase across sessions');
    // From the priming event: every later message of that stream, once, in order; the priming event itself is not resent.
    assert.deepEqual(await replay(store, 's1', priming), [[first, 1], [second, 2]]);
    assert.deepEqual(await replay(store, 's1', first), [[second, 2]]);
    assert.equal(await s1.getStreamIdForEventId!(first), 'stream-a');
    // Another session's event id is unknown here.
    await assert.rejects(() => replay(store, 's1', other), /unknown event id/);
    await store.delete('s1');
    await assert.rejects(() => replay(store, 's1', first), /unknown event id/);
    assert.deepEqual(await replay(store, 's2', other), []);
  });

  test('bounds the events per session and by age', async () => {
    let now = 1_000_000;
    const events = createMemoryEventStore({ maxEventsPerSession: 3, maxAgeMs: 10_000, now: () => now });
    const session = events.forSession('s');
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) ids.push(await session.storeEvent('a', message(n)));
    // The first two went (cap 3): replaying from them is refused, from the third works.
    await assert.rejects(() => session.replayEventsAfter(ids[1]!, { send: async () => {} }), /unknown event id/);
    const sent: string[] = [];
    await session.replayEventsAfter(ids[2]!, { send: async (id) => void sent.push(id) });
    assert.deepEqual(sent, [ids[3], ids[4]]);
    now += 10_001;
    assert.equal(await events.collect(), 3);
    await assert.rejects(() => session.replayEventsAfter(ids[4]!, { send: async () => {} }), /unknown event id/);
  });

  test('takes a queued state once per flush and writes it only when it changed', async () => {
    let state = { v: 1, n: 1 };
    let taken = 0;
    const snapshot = () => {
      taken++;
      return state;
    };
    const version = async () => (await store.load('s3'))!.version;
    const start = await version();
    // Three responses between two flushes: one snapshot, one write.
    for (let response = 0; response < 3; response++) store.saveStateLater('s3', snapshot);
    assert.equal(taken, 0, 'nothing is taken before the flush');
    await store.flush();
    assert.equal(taken, 1);
    assert.equal(await version(), start + 1);
    assert.deepEqual((await store.load('s3'))!.state, { v: 1, n: 1 });
    // Unchanged: the flush takes it again but only marks the session active.
    store.saveStateLater('s3', snapshot);
    await store.flush();
    assert.equal(taken, 2);
    assert.equal(await version(), start + 1, 'an unchanged state is not written again');
    state = { v: 1, n: 2 };
    store.saveStateLater('s3', snapshot);
    await store.flush();
    assert.equal(await version(), start + 2);
    assert.deepEqual((await store.load('s3'))!.state, { v: 1, n: 2 });
  });

  test('writes the queued states of a flush in one statement; a state the database refuses costs only its own write', async () => {
    const ids = Array.from({ length: 6 }, (_, index) => `batch-${index}`);
    for (const id of ids) assert.ok((await store.create(row(id))).admitted);
    let updates = 0;
    // Counts the statements that write a state, through a store on the same database.
    const counted = new Proxy(db, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (sql: string, params?: unknown[]) => {
          if (/UPDATE mcp_sessions\b.*SET state/s.test(sql)) updates++;
          return (value as Database['query']).call(target, sql, params);
        };
      },
    });
    const batching = createSessionStore({ db: counted, limits, shared: false, touchEveryMs: 60_000 });
    try {
      for (const [index, id] of ids.entries()) batching.saveStateLater(id, { v: 1, n: index });
      await batching.flush();
      assert.equal(updates, 1, 'one statement for six sessions');
      for (const [index, id] of ids.entries()) assert.deepEqual((await batching.load(id))!.state, { v: 1, n: index });
      // PostgreSQL's jsonb refuses U+0000: that state is not written, the others are, and its session stays active.
      updates = 0;
      const before = (await batching.load('batch-2'))!;
      for (const [index, id] of ids.entries()) batching.saveStateLater(id, { v: 1, n: index + 10, ...(id === 'batch-2' ? { text: 'a\u0000b' } : {}) });
      await batching.flush();
      assert.equal(updates, 1 + ids.length, 'the refused statement, then each state alone');
      for (const [index, id] of ids.entries()) if (id !== 'batch-2') assert.deepEqual((await batching.load(id))!.state, { v: 1, n: index + 10 });
      const refused = (await batching.load('batch-2'))!;
      assert.deepEqual(refused.state, before.state);
      assert.equal(refused.version, before.version);
    } finally {
      await batching.close();
    }
  });
});
