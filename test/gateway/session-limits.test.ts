/**
 * Issue #18 finding 3, over real Streamable HTTP: one tenant flooding `initialize` can only
 * push out its own sessions; another tenant's live session keeps answering. At the global cap
 * a new session is refused with 503, Retry-After and a JSON-RPC error, never by evicting a
 * live session; idle ones expire on the (short) TTL.
 */
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { firstText, identity, startHttpHarness, type HttpHarness } from './helpers.ts';
import type { GatewayOptions } from '../../src/gateway/gateway.ts';
import type { SessionIdentity } from '../../src/gateway/backend.ts';

const flooder = { orgId: 'acme', userId: 'mallory' } satisfies Partial<SessionIdentity>;
const victim = { orgId: 'globex', userId: 'victor' } satisfies Partial<SessionIdentity>;

/** A raw `initialize` POST as any MCP client sends it; returns the status, Retry-After and body. */
async function initialize(url: URL, who: Partial<SessionIdentity>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-test-identity': JSON.stringify(identity(who)) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

describe('MCP session limits per tenant over HTTP (issue #18 finding 3)', () => {
  let harness: HttpHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });
  const start = async (sessions: GatewayOptions['sessions'], clock?: () => number) => {
    harness = await startHttpHarness({ gateway: { sessions: { sweepIntervalMs: 0, ...sessions } }, ...(clock ? { clock } : {}) });
    return harness;
  };

  test('a tenant flooding initialize evicts only its own sessions; the other tenant\'s live session keeps answering', async () => {
    const { url, connect, gateway } = await start({ maxSessions: 50, maxSessionsPerKey: 5, maxSessionsPerOrg: 10 });
    const live = await connect(victim);
    const found = await live.client.callTool({ name: 'search_tools', arguments: { query: 'create an invoice', limit: 1 } });
    assert.match(firstText(found), /billing__create_invoice/);

    // 120 initialize calls from one tenant, 20 at a time (the old global cap evicted the oldest session: the victim's).
    const statuses: number[] = [];
    for (let wave = 0; wave < 6; wave++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => initialize(url, flooder)));
      statuses.push(...answers.map((answer) => answer.status));
    }
    assert.deepEqual([...new Set(statuses)], [200], 'the flooder is served, within its own limit');
    assert.equal(gateway.sessionCount, 6, 'five of the flooder\'s sessions and the victim\'s one');

    const listed = await live.client.listTools();
    assert.ok(listed.tools.some((tool) => tool.name === 'billing__create_invoice'), 'the victim\'s session and its bound tools survived');
    const again = await live.client.callTool({ name: 'billing__create_invoice', arguments: { customer: 'c-1', amount: 3 } });
    assert.equal(firstText(again), 'invoice created for c-1: 3');
  });

  test('at the global cap a new session gets 503 with Retry-After and a JSON-RPC error; live sessions stay', async () => {
    const { url, connect, gateway } = await start({ maxSessions: 3, maxSessionsPerKey: 10 });
    const live = await connect(victim);
    assert.equal((await initialize(url, flooder)).status, 200);
    assert.equal((await initialize(url, flooder)).status, 200);
    const refused = await initialize(url, flooder);
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.retryAfter) >= 1, `Retry-After: ${refused.retryAfter}`);
    const body = JSON.parse(refused.body) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.code, -32003);
    assert.match(body.error.message, /overloaded \(3 live MCP sessions\)/);
    assert.equal(gateway.sessionCount, 3);
    assert.ok((await live.client.listTools()).tools.length > 0, 'the live session still answers');
  });

  test('idle sessions expire on the TTL and make room; a refused tenant gets in once they do', async () => {
    let now = 0;
    const { url, gateway } = await start({ maxSessions: 2, idleTtlMs: 5 * 60_000 }, () => now);
    assert.equal((await initialize(url, victim)).status, 200);
    assert.equal((await initialize(url, victim)).status, 200);
    const refused = await initialize(url, flooder);
    assert.equal(refused.status, 503);
    assert.equal(refused.retryAfter, '300', 'the oldest idle session expires in 5 minutes');
    now += 5 * 60_000 + 1;
    assert.equal((await initialize(url, flooder)).status, 200, 'expired sessions are swept to make room');
    assert.equal(gateway.sessionCount, 1);
  });
});
