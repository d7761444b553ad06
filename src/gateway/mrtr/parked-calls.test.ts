import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParkedCall, ParkedCalls } from './parked-calls.ts';

const elicit = { method: 'elicitation/create' as const, params: { message: 'name?' } };

describe('calls paused on a 2026-07-28 client (issue #24)', () => {
  it('keeps a 2026 plugin its own key, gives a 2025 push one of Quiver\'s, and hands each answer to its request', async () => {
    const call = new ParkedCall('p');
    const signal = new AbortController().signal;
    const own = call.ask({ ...elicit, key: 'user_name' }, signal);
    const pushed = call.ask({ method: 'roots/list' }, signal);
    await call.changed();
    assert.deepEqual(Object.keys(call.takeRequests()), ['user_name', 'roots-2']);
    call.answer('user_name', { action: 'accept', content: { name: 'Ada' } });
    call.answer('roots-2', { roots: [] });
    assert.deepEqual(await own, { action: 'accept', content: { name: 'Ada' } });
    assert.deepEqual(await pushed, { roots: [] });
  });

  it('a round the client never answers expires: the plugin\'s request fails with a clear error and the call is dropped', async () => {
    const parked = new ParkedCalls({ roundTtlMs: 20 });
    const call = new ParkedCall('p');
    const asked = call.ask(elicit, new AbortController().signal);
    call.round = 1;
    assert.equal(parked.hold(call), undefined);
    // The expiry timer is unref'd (a waiting call must not keep a server process alive): hold the loop open here.
    const keepAlive = setInterval(() => undefined, 1_000);
    try {
      await assert.rejects(asked, /did not answer within 0 s, so Quiver ended the call/);
    } finally {
      clearInterval(keepAlive);
    }
    assert.equal(parked.get(call.id), undefined);
    assert.equal(call.abort.signal.aborted, true);
  });

  it('holds at most maxPerPrincipal calls per principal and maxTotal in all', () => {
    const parked = new ParkedCalls({ maxPerPrincipal: 1, maxTotal: 2 });
    assert.equal(parked.hold(new ParkedCall('a')), undefined);
    assert.match(parked.hold(new ParkedCall('a')) ?? '', /already has 1 calls waiting/);
    assert.equal(parked.hold(new ParkedCall('b')), undefined);
    assert.match(parked.hold(new ParkedCall('c')) ?? '', /its most calls waiting/);
    parked.close();
    assert.equal(parked.size, 0);
  });

  it('refuses a call past its round limit', () => {
    const parked = new ParkedCalls({ maxRounds: 2 });
    const call = new ParkedCall('a');
    call.round = 2;
    assert.match(parked.hold(call) ?? '', /more than 2 rounds/);
    parked.close();
  });
});
