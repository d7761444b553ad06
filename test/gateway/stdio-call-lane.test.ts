/**
 * Issue #28: a 2025-era stdio session answers a plain plugin `tools/call` past the SDK's dispatch
 * (`gateway/stdio-call-lane.ts`). Each behaviour is checked against the SDK path in the same
 * session: the same request with a progress token (which the lane leaves to the SDK) must get the
 * same answer, results and errors alike. The plugins are real MCP servers over stdio (the gateway
 * fixture server); the gateway runs in-process on in-memory streams so `laneCalls` can tell which
 * path answered.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { runStdioGateway, type StdioGateway } from '../../src/gateway/stdio.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import { collectStdioFrames, fixturePlugin, identity, marketplace, waitForFrame } from './helpers.ts';

type Frame = { id?: number | string; result?: { content?: unknown[]; isError?: boolean; serverInfo?: unknown }; error?: { code: number; message: string; data?: unknown } };

describe('the stdio call lane (issue #28)', { timeout: 120_000 }, () => {
  let backend: LocalTestBackend;
  let gateway: Gateway;
  const marker = join(mkdtempSync(join(tmpdir(), 'quiver-lane-marker-')), 'marker.txt');
  const connections: StdioGateway[] = [];

  before(async () => {
    const util = fixturePlugin('util', ['echo', 'add', 'slow', 'fail', 'explode'], { manifest: { title: 'Utilities', category: 'automation' }, callTimeoutMs: 60_000, serverArgs: ['--marker', marker] });
    backend = await createLocalTestBackend({ plugins: [util], marketplace });
    gateway = createGateway({ backend, options: { sessions: { sweepIntervalMs: 0 } } });
  });
  after(async () => {
    await Promise.allSettled(connections.map((connection) => connection.close()));
    await gateway?.close();
    await backend?.close();
  });

  /** An initialized 2025-era session over in-memory stdio, exposure `all`. */
  async function open() {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const frames = collectStdioFrames<Frame>(stdout);
    const connection = await runStdioGateway({ gateway, identity: identity({ exposureMode: 'all' }), stdin, stdout });
    connections.push(connection);
    const write = (message: object) => stdin.write(`${JSON.stringify(message)}\n`);
    write({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lane-test', version: '1' } } });
    assert.ok(await waitForFrame(frames, (frame) => frame.id === 'init'));
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    let next = 0;
    /** Sends a request and resolves with its answer (the frame without its id). */
    const request = async (method: string, params: object) => {
      const id = (next += 1);
      write({ jsonrpc: '2.0', id, method, params });
      const frame = await waitForFrame(frames, (candidate) => candidate.id === id);
      assert.ok(frame, `no answer to ${method} ${JSON.stringify(params)}`);
      const { id: _id, ...rest } = frame;
      return rest;
    };
    return { connection, frames, write, request };
  }

  /** The same call through the lane (plain) and through the SDK (a progress token sends it there). */
  async function bothWays(session: Awaited<ReturnType<typeof open>>, name: string, args: Record<string, unknown> | undefined, otherArgs = args) {
    const before = session.connection.laneCalls;
    const lane = await session.request('tools/call', { name, ...(args ? { arguments: args } : {}) });
    assert.equal(session.connection.laneCalls, before + 1, 'the plain call did not take the lane');
    const sdk = await session.request('tools/call', { name, ...(otherArgs ? { arguments: otherArgs } : {}), _meta: { progressToken: `p-${name}` } });
    assert.equal(session.connection.laneCalls, before + 1, 'the call with a progress token took the lane');
    return { lane, sdk };
  }

  it('answers a plain plugin call with the result the SDK path gives', async () => {
    const session = await open();
    const { lane, sdk } = await bothWays(session, 'util__echo', { message: 'through the lane' });
    assert.deepEqual(lane, sdk);
    assert.deepEqual(lane, { jsonrpc: '2.0', result: { content: [{ type: 'text', text: 'echo: through the lane' }] } });
    // A tool's own failure is a result with isError, both ways.
    const failed = await bothWays(session, 'util__fail', undefined);
    assert.equal(failed.lane.result?.isError, true);
    assert.deepEqual(failed.lane, failed.sdk);
  });

  it('maps errors as the SDK does: an unknown tool, bad arguments, a plugin error', async () => {
    const session = await open();
    const unknown = await bothWays(session, 'util__nope', { message: 'x' });
    assert.equal(unknown.lane.error?.code, -32602);
    assert.deepEqual(unknown.lane, unknown.sdk);
    const invalid = await bothWays(session, 'util__add', { a: 'one', b: 2 });
    assert.equal(invalid.lane.error?.code, -32602);
    assert.doesNotMatch(invalid.lane.error?.message ?? '', /^MCP error/);
    assert.deepEqual(invalid.lane, invalid.sdk);
    const exploded = await bothWays(session, 'util__explode', undefined);
    assert.deepEqual(exploded.lane, exploded.sdk);
  });

  it('aborts a lane call when the client cancels it, and sends no answer for it', async () => {
    const session = await open();
    const before = session.connection.laneCalls;
    session.write({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'util__slow', arguments: { ms: 50_000 } } });
    // The plugin has the call once it is running: wait for the lane to take it, then cancel.
    const until = Date.now() + 30_000;
    while (session.connection.laneCalls === before && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(session.connection.laneCalls, before + 1);
    // ... and the plugin has it (a fixed wait could end before that on a loaded machine).
    while (!(existsSync(marker) && readFileSync(marker, 'utf8').includes('started')) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.match(existsSync(marker) ? readFileSync(marker, 'utf8') : '', /started/);
    session.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'the user gave up' } });
    // The plugin's own call was cancelled (its marker says so) long before its 50 s.
    while (!(existsSync(marker) && readFileSync(marker, 'utf8').includes('cancelled')) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.match(existsSync(marker) ? readFileSync(marker, 'utf8') : '', /cancelled/);
    // A later answer arrives; none ever came for the cancelled call.
    await session.request('tools/call', { name: 'util__echo', arguments: { message: 'after' } });
    assert.equal(session.frames.filter((frame) => frame.id === 'slow').length, 0);
  });

  it('leaves calls with a progress token, a task, a meta-tool name or a malformed shape to the SDK', async () => {
    const session = await open();
    const before = session.connection.laneCalls;
    await session.request('tools/call', { name: 'util__echo', arguments: { message: 'p' }, _meta: { progressToken: 7 } });
    const task = await session.request('tools/call', { name: 'util__echo', arguments: { message: 't' }, task: { ttl: 60_000 } });
    assert.ok(task.result || task.error);
    await session.request('tools/call', { name: 'search_tools', arguments: { query: 'echo' } });
    const malformed = await session.request('tools/call', { name: 'util__echo', arguments: 'not an object' });
    assert.ok(malformed.error, JSON.stringify(malformed));
    assert.equal(session.connection.laneCalls, before);
    // A key the SDK's strict JSON-RPC request schema refuses: not a request to it, so no answer.
    session.write({ jsonrpc: '2.0', id: 'odd', method: 'tools/call', params: { name: 'util__echo', arguments: { message: 'odd' } }, extra: true });
    await session.request('tools/call', { name: 'util__echo', arguments: { message: 'plain' } });
    assert.equal(session.connection.laneCalls, before + 1);
    assert.equal(session.frames.filter((frame) => frame.id === 'odd').length, 0);
  });
});
