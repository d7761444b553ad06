/**
 * Issue #28: a session POST of one request answered whole (`session-post-lane`), against the
 * SDK's own transport and server: the same SSE events as the SDK's stream, stored for resumption;
 * answers not ready in time, and server requests the client must answer, continue on the SDK's
 * stream with nothing lost or delivered twice; what the lane does not take is the SDK's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ElicitResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMemoryEventStore } from '../sessions/memory-event-store.ts';
import { SessionPostLane } from './session-post-lane.ts';

const SESSION = 'session-1';

type Event = { id?: string; data: string };

/** The SSE events of a body. */
function events(text: string): Event[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: Event = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) event.id = line.slice(4);
        if (line.startsWith('data: ')) event.data = line.slice(6);
      }
      return event;
    });
}

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-session-id': SESSION,
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** A gate a tool waits on. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** A session: the SDK's server and transport, with or without the lane (holdMs 0). */
async function openSession(holdMs: number) {
  const eventStore = createMemoryEventStore().forSession(SESSION);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => SESSION, eventStore });
  const lane = new SessionPostLane(transport, { eventStore, holdMs });
  const server = new Server({ name: 'lane-test', version: '1' }, { capabilities: { tools: { listChanged: true } } });
  const calls = new Map<string, number>();
  const slow = gate();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'quick', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    calls.set(name, (calls.get(name) ?? 0) + 1);
    if (name === 'notify') await extra.sendNotification({ method: 'notifications/tools/list_changed' });
    if (name === 'slow') {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: 7, progress: 1 } });
      await slow.wait;
    }
    if (name === 'ask') {
      const answer = await extra.sendRequest({ method: 'elicitation/create', params: { message: 'go on?', requestedSchema: { type: 'object', properties: {} } } }, ElicitResultSchema);
      return { content: [{ type: 'text', text: `asked: ${answer.action}` }] };
    }
    return { content: [{ type: 'text', text: `done: ${name}` }] };
  });
  await server.connect(transport);
  // POSTs the SDK transport itself served (the lane's hand-overs among them).
  const sdkPosts = { count: 0 };
  const handleRequest = transport.handleRequest.bind(transport);
  transport.handleRequest = (request, options) => {
    if (request.method === 'POST') sdkPosts.count += 1;
    return handleRequest(request, options);
  };
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'test', version: '1' } } };
  await (await transport.handleRequest(post(initialize), { parsedBody: initialize })).text();
  await transport.handleRequest(post({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  /** How the HTTP front answers a parsed session POST. */
  const answer = (body: unknown, headers?: Record<string, string>): Promise<Response> => {
    const request = post(body, headers);
    return lane.serve(request, body) ?? transport.handleRequest(request, { parsedBody: body });
  };
  sdkPosts.count = 0;
  return { transport, lane, server, calls, slow, answer, sdkPosts };
}

const call = (id: number, name: string, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, ...extra } });

/** Reads a streamed body until `done` holds for what arrived. */
async function readUntil(response: Response, done: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

describe('session POST lane', () => {
  it('answers whole with the events, headers and order of the SDK stream', async () => {
    const withLane = await openSession(5_000);
    const sdkOnly = await openSession(0);
    for (const body of [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, call(2, 'quick'), call(3, 'notify'), call(4, 'nope-but-answered')]) {
      const whole = await withLane.answer(body);
      const streamed = await sdkOnly.answer(body);
      assert.equal(whole.status, streamed.status);
      for (const header of ['content-type', 'cache-control', 'mcp-session-id']) assert.equal(whole.headers.get(header), streamed.headers.get(header), header);
      const [wholeEvents, streamedEvents] = [events(await whole.text()), events(await streamed.text())];
      assert.deepEqual(
        wholeEvents.map((event) => event.data),
        streamedEvents.map((event) => event.data),
      );
      // Priming event first, then one id per message, increasing, as the SDK numbers them.
      assert.equal(wholeEvents[0]!.data, '');
      const ids = wholeEvents.map((event) => Number(event.id));
      assert.ok(ids.every((id, index) => Number.isInteger(id) && id > 0 && (index === 0 || id > ids[index - 1]!)), `event ids ${ids.join(',')}`);
    }
    // The whole answer is one string body, not a stream the server copies to the socket.
    const notify = await withLane.answer(call(5, 'notify'));
    assert.deepEqual(
      events(await notify.text()).map((event) => event.data && JSON.parse(event.data).method),
      ['', 'notifications/tools/list_changed', undefined],
    );
    assert.equal(withLane.calls.get('notify'), 2);
    assert.equal(withLane.sdkPosts.count, 0, 'the SDK transport served none of the POSTs');
    assert.equal(sdkOnly.sdkPosts.count, 4);
    await withLane.server.close();
    await sdkOnly.server.close();
  });

  it('hands an answer not ready in time to the SDK stream: progress first, the result later, the call delivered once', async () => {
    const { answer, slow, calls, server, sdkPosts } = await openSession(30);
    const response = await answer(call(1, 'slow', { _meta: { progressToken: 7 } }));
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const first = await readUntil(response, (text) => text.includes('notifications/progress'));
    assert.doesNotMatch(first, /done: slow/);
    slow.open();
    const rest = await readUntil(response, () => false); // to the end of the stream
    assert.match(rest, /done: slow/);
    assert.equal(calls.get('slow'), 1);
    assert.equal(sdkPosts.count, 1, 'handed over once');
    await server.close();
  });

  it('hands over at once when the server asks the client something, and the answer arrives', async () => {
    const { answer, calls, server } = await openSession(60_000);
    const response = await answer(call(1, 'ask'));
    const asked = await readUntil(response, (text) => text.includes('elicitation/create'));
    const request = events(asked)
      .map((event) => (event.data ? (JSON.parse(event.data) as { id?: number; method?: string }) : {}))
      .find((message) => message.method === 'elicitation/create')!;
    const accepted = await answer({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: {} } });
    assert.equal(accepted.status, 202);
    assert.match(await readUntil(response, () => false), /asked: accept/);
    assert.equal(calls.get('ask'), 1);
    await server.close();
  });

  it('leaves to the SDK what it does not take', async () => {
    const { lane, server } = await openSession(5_000);
    const take = (body: unknown, headers?: Record<string, string>) => lane.serve(post(body, headers), body) !== undefined;
    assert.equal(take([call(1, 'quick')]), false, 'a batch');
    assert.equal(take({ jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }), false, 'initialize');
    assert.equal(take({ jsonrpc: '2.0', method: 'notifications/initialized' }), false, 'a notification');
    assert.equal(take({ jsonrpc: '2.0', id: 3, result: {} }), false, 'a response');
    assert.equal(take({ ...call(4, 'quick'), extra: 1 }), false, 'an unknown member');
    assert.equal(take({ jsonrpc: '2.0', id: 1.5, method: 'tools/list' }), false, 'a fractional id');
    assert.equal(take(call(5, 'quick', { _meta: 5 })), false, 'a _meta that is not an object');
    assert.equal(take(call(6, 'quick'), { accept: 'application/json' }), false, 'no event-stream in Accept');
    assert.equal(take(call(7, 'quick'), { 'content-type': 'text/plain' }), false, 'not JSON');
    assert.equal(take(call(8, 'quick'), { 'mcp-protocol-version': '1999-01-01' }), false, 'an unknown protocol version');
    assert.equal(take(call(9, 'quick'), { 'mcp-session-id': 'another' }), false, 'another session');
    assert.equal(take(call(10, 'quick', { _meta: { progressToken: 'p' } })), true, 'a progress token');
    await server.close();
  });

  it('ends a held answer when the session closes, and takes nothing after', async () => {
    const { answer, lane, server } = await openSession(60_000);
    const pending = answer(call(1, 'slow', { _meta: { progressToken: 7 } }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.close();
    const response = await pending;
    const sent = events(await response.text()).map((event) => event.data);
    assert.equal(sent.length, 2); // the priming event and the progress notification, no result
    assert.match(sent[1]!, /notifications\/progress/);
    assert.equal(lane.serve(post(call(2, 'quick')), call(2, 'quick')), undefined);
  });

  it('stores a whole answer so a GET with Last-Event-ID replays it through the SDK', async () => {
    const { answer, transport, server } = await openSession(5_000);
    const whole = events(await (await answer(call(1, 'quick'))).text());
    const resumed = await transport.handleRequest(
      new Request('http://127.0.0.1/mcp', { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-11-25', 'last-event-id': whole[0]!.id! } }),
    );
    assert.equal(resumed.status, 200);
    const replayed = events(await readUntil(resumed, (text) => text.includes('done: quick')));
    assert.deepEqual(replayed.at(-1), whole.at(-1));
    await server.close();
  });
});
