/**
 * Resumable SSE across replicas (issue #16 follow-up), in one process: two gateways with their
 * own HTTP handlers ("replicas") over one database, real fixture servers behind a local backend,
 * real HTTP. A client's POST stream on replica A is cut right after its priming event; the call
 * finishes on A (its events stored); a `GET` with `Last-Event-ID` to replica B, which never held
 * the session, replays every missed event exactly once (the response included), and a second
 * resume from the last event before the response replays only the response. Another session's
 * event id is refused; deleting the session deletes its events; the age limit and the
 * per-session cap hold.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/backends.ts';
import { identity } from '../gateway/helpers.ts';
import { createSessionEventStore } from '../../src/sessions/index.ts';
import type { Database } from '../../src/store/database.ts';
import { startTwoReplicas, type TwoReplicas } from './two-replicas.ts';
const PROTOCOL = '2025-11-25';

interface SseEvent {
  id?: string;
  data: string;
}

/** Reads SSE events from a response body until `done` says so (or the stream ends / times out). */
async function readEvents(response: Response, done: (events: SseEvent[]) => boolean, timeoutMs = 10_000): Promise<SseEvent[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  const deadline = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    while (!done(events)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const id = /^id: ?(.*)$/m.exec(block)?.[1];
        const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((match) => match[1]).join('\n');
        if (id !== undefined || data !== '') events.push({ ...(id !== undefined ? { id } : {}), data });
      }
    }
  } finally {
    clearTimeout(deadline);
    // Cutting the stream is the point: the client goes away mid-call.
    await reader.cancel().catch(() => undefined);
  }
  return events;
}

const messageOf = (event: SseEvent) => (event.data.trim() === '' ? undefined : (JSON.parse(event.data) as Record<string, unknown>));

describeEachBackend('resumable SSE across replicas', (backendUnderTest) => {
  let replicated: TwoReplicas | undefined;
  let db: Database;
  let url: URL;

  before(async () => {
    // The x-replica header picks the replica, so a test says where each request goes.
    replicated = await startTwoReplicas(backendUnderTest, (request) => ({ replica: Number(request.headers.get('x-replica') ?? 0), identity: identity() }));
    ({ db, url } = replicated);
  });

  after(async () => {
    await replicated?.close();
  });

  function send(replica: number, method: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(url, {
      method,
      headers: { 'x-replica': String(replica), accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL, ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  }

  /** A session started on replica 0; its id. */
  async function startSession(): Promise<string> {
    const init = await send(0, 'POST', {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'resume-test', version: '1.0.0' } },
    });
    assert.equal(init.status, 200);
    const sessionId = init.headers.get('mcp-session-id')!;
    await readEvents(init, (events) => events.some((event) => messageOf(event)?.id === 0));
    const initialized = await send(0, 'POST', { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sessionId });
    assert.equal(initialized.status, 202);
    return sessionId;
  }

  async function storedEvents(sessionId: string, streamOf: string): Promise<Array<{ id: string; message: Record<string, unknown> }>> {
    const rows = await db.query<{ id: string | number; message: Record<string, unknown> }>(
      `SELECT id, message FROM mcp_session_events WHERE session_id = $1 AND stream_id = (SELECT stream_id FROM mcp_session_events WHERE id = $2) ORDER BY id`,
      [sessionId, streamOf],
    );
    return rows.rows.map((row) => ({ id: String(row.id), message: row.message }));
  }

  test('a stream cut on replica A resumes on replica B with Last-Event-ID; missed events arrive exactly once', async () => {
    const sessionId = await startSession();
    // A call whose stream carries a notification (the search binds tools) and the response.
    const call = await send(0, 'POST', { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'send an email', limit: 2 } } }, { 'mcp-session-id': sessionId });
    assert.equal(call.headers.get('content-type'), 'text/event-stream');
    const seenOnA = await readEvents(call, (events) => events.length >= 1);
    const priming = seenOnA[0]!;
    assert.ok(priming.id && messageOf(priming) === undefined, `the first event is the priming event: ${JSON.stringify(priming)}`);

    // The call finishes on A with nobody listening: its events are in the store.
    let stored: Array<{ id: string; message: Record<string, unknown> }> = [];
    for (let i = 0; i < 100 && !stored.some((row) => row.message.id === 7); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stored = await storedEvents(sessionId, priming.id!);
    }
    const missed = stored.filter((row) => Number(row.id) > Number(priming.id) && 'jsonrpc' in row.message);
    assert.ok(missed.some((row) => row.message.id === 7), 'the response was stored on A');
    assert.ok(missed.some((row) => row.message.method === 'notifications/tools/list_changed'), `a notification preceded it: ${JSON.stringify(missed)}`);

    // Replica B has never seen this session: it restores it and replays from the store.
    const resumed = await send(1, 'GET', undefined, { 'mcp-session-id': sessionId, 'last-event-id': priming.id!, accept: 'text/event-stream' });
    assert.equal(resumed.status, 200);
    const replayed = await readEvents(resumed, (events) => events.some((event) => messageOf(event)?.id === 7));
    assert.deepEqual(replayed.map((event) => event.id), missed.map((row) => row.id), 'every missed event, in order, once');
    assert.deepEqual(replayed.map(messageOf), missed.map((row) => row.message));
    const response = messageOf(replayed.at(-1)!) as { result?: { content?: Array<{ text: string }> } };
    assert.match(response.result?.content?.[0]?.text ?? '', /mail__send_email/);

    // Resuming from the event before the response replays only the response (on A this time).
    const again = await send(0, 'GET', undefined, { 'mcp-session-id': sessionId, 'last-event-id': replayed.at(-2)!.id!, accept: 'text/event-stream' });
    assert.equal(again.status, 200);
    const tail = await readEvents(again, (events) => events.some((event) => messageOf(event)?.id === 7));
    assert.deepEqual(tail.map((event) => event.id), [replayed.at(-1)!.id]);

    // The session carries on on B.
    const listed = await send(1, 'POST', { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { 'mcp-session-id': sessionId });
    const listedEvents = await readEvents(listed, (events) => events.some((event) => messageOf(event)?.id === 8));
    assert.ok(listedEvents.some((event) => event.data.includes('mail__send_email')), 'the binding made on A is listed on B');
  });

  test("another session's event id is refused; ending the session deletes its events", async () => {
    const first = await startSession();
    const second = await startSession();
    const call = await send(0, 'POST', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': first });
    const events = await readEvents(call, (seen) => seen.some((event) => messageOf(event)?.id === 1));
    const foreign = await send(1, 'GET', undefined, { 'mcp-session-id': second, 'last-event-id': events[0]!.id!, accept: 'text/event-stream' });
    assert.equal(foreign.status, 400);
    await foreign.body?.cancel();
    const ended = await send(1, 'DELETE', undefined, { 'mcp-session-id': first });
    assert.equal(ended.status, 200);
    const left = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM mcp_session_events WHERE session_id = $1', [first]);
    assert.equal(Number(left.rows[0]!.n), 0);
  });

  test('events are bounded per session and by age', async () => {
    const sessionId = await startSession();
    const events = createSessionEventStore({ db, maxEventsPerSession: 5, trimEvery: 4, maxAgeMs: 60_000 });
    const store = events.forSession(sessionId);
    const ids: string[] = [];
    for (let n = 0; n < 12; n += 1) ids.push(await store.storeEvent('s1', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } }));
    const kept = await db.query<{ id: string | number }>('SELECT id FROM mcp_session_events WHERE session_id = $1 ORDER BY id', [sessionId]);
    // Trimmed to 5 at the 12th store (every 4th); nothing newer was dropped.
    assert.deepEqual(kept.rows.map((row) => String(row.id)), ids.slice(-5));
    assert.equal(await events.collect(), 0, 'nothing is older than the age limit yet');
    await db.query(`UPDATE mcp_session_events SET created_at = now() - interval '2 minutes' WHERE session_id = $1`, [sessionId]);
    assert.equal(await events.collect(), 5);
    // A session that is gone stores nothing, and its id replays nothing.
    const gone = events.forSession('no-such-session');
    assert.equal(await gone.storeEvent('s1', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }), '0');
  });
});
