import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { setImmediate as nextCheckPhase } from 'node:timers/promises';
import { gatherRound } from './gather-round.ts';
import { ParkedCall } from './parked-calls.ts';

const elicit = { method: 'elicitation/create' as const, params: { message: 'name?' } };

/** Blocks the event loop, as a loaded machine or a long task does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describe('gathering a paused call\'s requests into rounds (issue #24)', () => {
  it('a request the plugin wrote while the event loop stalled past the quiet window is in the same round', async () => {
    // The plugin's connection: each line it writes is one request it asks, as over its stdio.
    const call = new ParkedCall('p');
    const signal = new AbortController().signal;
    const server = createServer((socket) => socket.on('data', () => void call.ask({ method: 'roots/list' }, signal).catch(() => undefined)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const plugin = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    await once(plugin, 'connect');
    const [serverSide] = await accepted;
    try {
      void call.ask(elicit, signal).catch(() => undefined);
      const round = gatherRound(call, 20);
      // In a check phase, with the round's quiet timer armed: the plugin's second request reaches
      // the socket, then the loop is blocked past the window. The next phase is the timers', before
      // any I/O poll: a round decided there would leave the written request unread.
      await nextCheckPhase();
      plugin.write('roots/list\n');
      stall(150);
      await round;
      assert.deepEqual(Object.values(call.takeRequests()).map((request) => request.method), ['elicitation/create', 'roots/list']);
    } finally {
      call.fail(new Error('test over'));
      plugin.destroy();
      serverSide.destroy();
      server.close();
    }
  });

  it('requests the plugin makes within the quiet window make one round', async () => {
    const call = new ParkedCall('p');
    const signal = new AbortController().signal;
    void call.ask(elicit, signal).catch(() => undefined);
    const round = gatherRound(call, 200);
    setTimeout(() => void call.ask({ method: 'roots/list' }, signal).catch(() => undefined), 5);
    await round;
    assert.deepEqual(Object.values(call.takeRequests()).map((request) => request.method), ['elicitation/create', 'roots/list']);
    call.fail(new Error('test over'));
  });

  it('a lone request makes a round once the plugin has been quiet; a call that ends makes none', async () => {
    const call = new ParkedCall('p');
    void call.ask(elicit, new AbortController().signal).catch(() => undefined);
    await gatherRound(call, 20);
    assert.ok(call.quietFor() >= 20);
    assert.deepEqual(Object.keys(call.takeRequests()), ['elicitation-1']);

    const ended = new ParkedCall('p');
    const gathering = gatherRound(ended, 20);
    ended.settle({ result: { content: [] } });
    await gathering;
    assert.deepEqual(ended.takeRequests(), {});
  });
});
