/**
 * Front pacing (issue #28): MCP POSTs wait for a turn before the API app sees them, other
 * requests go straight through, and a POST refused because too many wait gets the gateway's
 * overload answer. Against a real Node HTTP server, then the refusal on the listener itself.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TurnGate } from '../gateway/turn-gate.ts';
import { OVERLOADED_ERROR_CODE } from '../gateway/errors.ts';
import { isPacedRequest, pacedListener, pacedServerFactory } from './front-pacing.ts';

it('paces POST /mcp only', () => {
  assert.equal(isPacedRequest({ method: 'POST', url: '/mcp' }), true);
  assert.equal(isPacedRequest({ method: 'POST', url: '/mcp?x=1' }), true);
  assert.equal(isPacedRequest({ method: 'GET', url: '/mcp' }), false);
  assert.equal(isPacedRequest({ method: 'DELETE', url: '/mcp' }), false);
  assert.equal(isPacedRequest({ method: 'POST', url: '/mcpx' }), false);
  assert.equal(isPacedRequest({ method: 'POST', url: '/internal/tool-registry/select' }), false);
});

it('starts paced POSTs one per event-loop turn, in arrival order, through a real server', async () => {
  const started: string[] = [];
  const gate = new TurnGate({ perTurn: 1, maxWaiting: 100 });
  const server = pacedServerFactory(gate)({}, (request, response) => {
    started.push(`${request.method} ${request.url}`);
    response.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const answers = await Promise.all([
      fetch(`${base}/mcp`, { method: 'POST', body: '{}' }),
      fetch(`${base}/mcp`, { method: 'GET' }),
      fetch(`${base}/healthz`),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
    assert.deepEqual(started.sort(), ['GET /healthz', 'GET /mcp', 'POST /mcp']);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A stand-in for Node's response that records what was written. */
function recordingResponse(): ServerResponse & { written: { status?: number; headers?: Record<string, unknown>; body?: string } } {
  const written: { status?: number; headers?: Record<string, unknown>; body?: string } = {};
  return {
    written,
    writeHead(status: number, headers: Record<string, unknown>) {
      written.status = status;
      written.headers = headers;
      return this;
    },
    end(body?: string) {
      written.body = body;
      return this;
    },
  } as unknown as ServerResponse & { written: typeof written };
}

it('waits for a later turn when this one is taken, and refuses with the overload answer when the queue is full', async () => {
  const gate = new TurnGate({ perTurn: 1, maxWaiting: 1 });
  const started: string[] = [];
  const listener = pacedListener(gate, (request) => {
    started.push(String(request.url));
  });
  const post = (url: string) => ({ method: 'POST', url }) as IncomingMessage;
  const responses = [recordingResponse(), recordingResponse(), recordingResponse(), recordingResponse()];
  // All in one turn: the first starts in it, the second waits for the next, the third is refused;
  // a GET is never paced.
  listener(post('/mcp?first'), responses[0]!);
  listener(post('/mcp?second'), responses[1]!);
  listener(post('/mcp?third'), responses[2]!);
  listener({ method: 'GET', url: '/mcp' } as IncomingMessage, responses[3]!);
  assert.deepEqual(started, ['/mcp']);
  // The first POST starts in this turn (once its promise settles), the second in the next one.
  await Promise.resolve();
  assert.deepEqual(started, ['/mcp', '/mcp?first']);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(started, ['/mcp', '/mcp?first', '/mcp?second']);
  const refused = responses[2]!.written;
  assert.equal(refused.status, 503);
  assert.equal(refused.headers?.['retry-after'], '1');
  assert.equal(refused.headers?.connection, 'close');
  const body = JSON.parse(refused.body!) as { jsonrpc: string; error: { code: number; message: string }; id: null };
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.error.code, OVERLOADED_ERROR_CODE);
  assert.match(body.error.message, /overloaded/);
  assert.equal(body.id, null);
});
