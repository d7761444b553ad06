/**
 * MCP sessions any replica can serve (issue #16), in one process: two gateways with their own
 * HTTP handlers ("replicas") over one database and one local backend with real fixture
 * servers. A real SDK client's requests alternate between them (round robin, no stickiness):
 * search on one, call on the other, loop-guard windows counted across both, the outcome
 * reported once; a copy whose row is gone answers 404; the store's rules (version check,
 * per-tenant limits, expiry and collection, extensions) on PGlite and PostgreSQL.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { firstText, identity, watchListChanged } from '../gateway/helpers.ts';
import type { LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import type { SessionIdentity } from '../../src/gateway/backend.ts';
import { createSessionStore } from '../../src/sessions/index.ts';
import { collectSessions } from '../../src/composition/stored-sessions.ts';
import type { Database } from '../../src/store/database.ts';
import { REPLICA_SESSION_LIMITS as limits, startTwoReplicas, type Replica, type TwoReplicas } from './two-replicas.ts';

describeEachBackend('MCP sessions across two replicas', (backendUnderTest) => {
  let replicated: TwoReplicas | undefined;
  let db: Database;
  let backend: LocalTestBackend;
  let replicas: Replica[];
  let url: URL;
  let next = 0;

  before(async () => {
    replicated = await startTwoReplicas(backendUnderTest, (request) => {
      const header = request.headers.get('x-test-identity');
      // Round robin, no stickiness: every request to the other replica.
      return { replica: next++ % 2, identity: header ? (JSON.parse(header) as SessionIdentity) : identity() };
    });
    ({ db, backend, replicas, url } = replicated);
  });

  after(async () => {
    await replicated?.close();
  });

  async function connect(who: Partial<SessionIdentity> = {}) {
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-test-identity': JSON.stringify(identity(who)) } } });
    const client = new Client({ name: 'replica-test', version: '1.0.0' });
    const listChanged = watchListChanged(client);
    await client.connect(transport);
    return { client, transport, listChanged };
  }

  test('search on one replica, call on the other; the loop guard counts across both; one outcome', async () => {
    const { client, transport } = await connect();
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'echo a message back', limit: 3 } });
    const names = (JSON.parse(firstText(found)) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    assert.ok(names.includes('util__echo'), `search found ${names.join(', ')}`);
    // Several calls, alternating replicas: each needs the binding the other one stored.
    for (let call = 1; call <= 3; call += 1) {
      const result = await client.callTool({ name: 'util__echo', arguments: { message: 'same' } });
      assert.equal(result.isError, undefined, firstText(result));
      assert.doesNotMatch(firstText(result), /Loop detected/);
    }
    // The 4th identical call closes a loop only if the guard saw the calls made on both replicas.
    const fourth = await client.callTool({ name: 'util__echo', arguments: { message: 'same' } });
    assert.match(JSON.stringify(fourth.content), /Loop detected/);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(!listed.includes('util__echo'), 'the looping tool is suspended on whichever replica answers');
    assert.ok(replicas.every((replica) => replica.served >= 3), `both replicas served: ${replicas.map((r) => r.served).join('/')}`);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await client.close();
    assert.equal(await replicas[0]!.store.load(sessionId), undefined, 'DELETE removes the row');
    const search = backend.searches.at(-1)!;
    await waitFor(() => backend.outcomes.some((outcome) => outcome.eventId === search.eventId));
    const reported = backend.outcomes.filter((outcome) => outcome.eventId === search.eventId);
    assert.equal(reported.length, 1, 'the outcome is reported once');
    assert.deepEqual(reported[0]!.toolsCalled, ['util__echo']);
    assert.deepEqual((reported[0] as { flaggedTools?: string[] }).flaggedTools, ['util__echo']);
  });

  test("another identity cannot use a stored session id; a copy whose row is gone answers 404", async () => {
    const { client, transport } = await connect();
    await client.callTool({ name: 'search_tools', arguments: { query: 'send an email', limit: 2 } });
    const sessionId = transport.sessionId!;
    const foreign = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18', 'x-test-identity': JSON.stringify(identity({ orgId: 'globex', userId: 'u9' })) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(foreign.status, 404);
    await foreign.body?.cancel();
    // Both replicas hold a copy by now; the row goes (as when the collector or a limit removes it).
    await client.listTools();
    await replicas[0]!.store.delete(sessionId);
    await assert.rejects(() => client.listTools(), /Session not found|404/);
    await assert.rejects(() => client.listTools(), /Session not found|404/);
    await client.close();
  });

  test('store rules: version check, limits per key and organisation, the global cap, expiry, extensions', async () => {
    const store = createSessionStore({ db, limits: { maxSessions: 4, maxSessionsPerKey: 2, maxSessionsPerOrg: 3, idleTtlMs: 60_000 }, shared: true });
    try {
      await db.query('DELETE FROM mcp_sessions');
      const row = (id: string, key: string, org: string | null) => ({
        id, identity: { orgId: org }, identityKey: `{"orgId":${JSON.stringify(org)}}`, owner: { key, org }, protocolVersion: '2025-06-18', client: {}, state: { v: 1 }, extensions: {},
      });
      assert.deepEqual(await store.create(row('a1', 'key-a', 'acme')), { admitted: true, evicted: [] });
      assert.deepEqual(await store.check('a1', 1), { version: 1 });
      assert.equal(await store.saveState('a1', { v: 1, n: 2 }), 2);
      const changed = await store.check('a1', 1);
      assert.ok(changed && 'state' in changed && changed.version === 2 && changed.state.n === 2);
      // A single-process store writes a changed state behind, with the activity flush.
      const local = createSessionStore({ db, limits, shared: false, touchEveryMs: 60_000 });
      local.saveStateLater('a1', { v: 1, n: 3 });
      assert.equal((await store.load('a1'))!.state.n, 2, 'not yet written');
      await local.close();
      assert.equal((await store.load('a1'))!.state.n, 3, 'written by the flush');
      await store.saveState('a1', { v: 1, n: 2 });
      assert.equal(await store.setExtension('a1', 'logLevel', 'debug'), 5);
      assert.deepEqual((await store.load('a1'))!.extensions, { logLevel: 'debug' });
      await store.create(row('a2', 'key-a', 'acme'));
      // key-a at its limit of 2: its own least recently seen session goes.
      const third = await store.create(row('a3', 'key-a', 'acme'));
      assert.ok(third.admitted && third.evicted.map((evicted) => evicted.id).join() === 'a1');
      await store.create(row('b1', 'key-b', 'acme'));
      // acme at its limit of 3 (a2, a3, b1): key-c of acme pushes out acme's oldest, a2.
      const c1 = await store.create(row('c1', 'key-c', 'acme'));
      assert.ok(c1.admitted && c1.evicted.map((evicted) => evicted.id).join() === 'a2');
      await store.create(row('g1', 'key-g', 'globex'));
      // Global cap 4 (a3, b1, c1, g1): another tenant is refused, nobody's live session taken.
      const refused = await store.create(row('h1', 'key-h', 'hooli'));
      assert.equal(refused.admitted, false);
      assert.ok(!refused.admitted && refused.retryAfterMs >= 1000);
      assert.equal(await store.countLive(), 4);
      // Expiry by the database clock; collection happens once, whoever runs it.
      await db.query(`UPDATE mcp_sessions SET expires_at = now() - interval '1 second', state = $2::jsonb WHERE id = $1`, [
        'g1', JSON.stringify({ openEvent: { eventId: '00000000-0000-4000-8000-000000000001', openedAt: Date.now(), calls: [{ name: 'x__y', success: true }] } }),
      ]);
      assert.equal(await store.load('g1'), undefined, 'an expired session is gone at once');
      const before = backend.outcomes.length;
      const [first, second] = await Promise.all([collectSessions(store, replicas[0]!.gateway), collectSessions(store, replicas[1]!.gateway)]);
      assert.equal(first.expired + second.expired, 1, 'collected once, not once per replica');
      await waitFor(() => backend.outcomes.length > before);
      assert.deepEqual(backend.outcomes.slice(before).map((outcome) => outcome.eventId), ['00000000-0000-4000-8000-000000000001']);
    } finally {
      await store.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
