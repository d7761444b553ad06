import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SessionRegistry, type SessionOwner } from './session-registry.ts';

const alice: SessionOwner = { key: 'key-alice', org: 'org-a' };
const alice2: SessionOwner = { key: 'key-alice-2', org: 'org-a' };
const bob: SessionOwner = { key: 'key-bob', org: 'org-b' };
const loner: SessionOwner = { key: 'key-loner', org: null };

describe('SessionRegistry (seed 004 §6.4, issue #18 finding 3)', () => {
  function setup(limits: { maxSessions?: number; maxSessionsPerKey?: number; maxSessionsPerOrg?: number; idleTtlMs?: number } = {}) {
    let now = 0;
    const registry = new SessionRegistry<string>({ idleTtlMs: 100, maxSessions: 10, ...limits, now: () => now });
    return { registry, advance: (ms: number) => (now += ms) };
  }
  const ids = (released: Array<{ id: string }>) => released.map((entry) => entry.id);

  test('rejects bad options', () => {
    assert.throws(() => new SessionRegistry({ idleTtlMs: 0, maxSessions: 1, now: () => 0 }), RangeError);
    assert.throws(() => new SessionRegistry({ idleTtlMs: 1, maxSessions: 0, now: () => 0 }), RangeError);
    assert.throws(() => new SessionRegistry({ idleTtlMs: 1, maxSessions: 1, maxSessionsPerKey: 0, now: () => 0 }), RangeError);
    assert.throws(() => new SessionRegistry({ idleTtlMs: 1, maxSessions: 1, maxSessionsPerOrg: Number.NaN, now: () => 0 }), RangeError);
  });

  test('idle sessions are swept; touched ones survive', () => {
    const { registry, advance } = setup();
    registry.add('a', 'A', alice);
    registry.add('b', 'B', bob);
    advance(80);
    assert.equal(registry.touch('b'), true);
    advance(30);
    assert.deepEqual(registry.sweep(), [{ id: 'a', value: 'A', reason: 'expired' }]);
    assert.equal(registry.peek('b'), 'B');
    assert.equal(registry.touch('a'), false);
    assert.equal(registry.countForKey(alice.key), 0);
  });

  test('a key over its own limit loses its own least recently active session, never another tenant\'s', () => {
    const { registry, advance } = setup({ maxSessionsPerKey: 2 });
    registry.add('bob-1', 'B1', bob);
    advance(1);
    registry.add('a1', 'A1', alice);
    advance(1);
    registry.add('a2', 'A2', alice);
    advance(1);
    registry.touch('a1'); // a2 is now the idler of alice's two
    const added = registry.add('a3', 'A3', alice);
    assert.equal(added.admitted, true);
    assert.deepEqual(added.released, [{ id: 'a2', value: 'A2', reason: 'key-limit' }]);
    assert.deepEqual(registry.values().sort(), ['A1', 'A3', 'B1']);
    assert.equal(registry.countForKey(alice.key), 2);
  });

  test('an organisation over its limit loses one of its own sessions (any of its keys), others untouched', () => {
    const { registry, advance } = setup({ maxSessionsPerOrg: 2 });
    registry.add('a1', 'A1', alice);
    advance(1);
    registry.add('b1', 'B1', bob);
    advance(1);
    registry.add('a2', 'A2', alice2);
    advance(1);
    const added = registry.add('a3', 'A3', alice2);
    assert.deepEqual(ids(added.released), ['a1']);
    assert.equal(added.released[0]!.reason, 'org-limit');
    assert.equal(registry.peek('b1'), 'B1');
  });

  test('sessions without an organisation count only against their key', () => {
    const { registry } = setup({ maxSessionsPerOrg: 1 });
    assert.equal(registry.add('l1', 'L1', loner).released.length, 0);
    assert.equal(registry.add('l2', 'L2', loner).released.length, 0);
    assert.equal(registry.size, 2);
  });

  test('at the global cap a new session is refused with a retry hint; live sessions stay', () => {
    const { registry, advance } = setup({ maxSessions: 2 });
    registry.add('a1', 'A1', alice);
    advance(30);
    registry.add('b1', 'B1', bob);
    advance(10);
    const refused = registry.add('x', 'X', loner);
    assert.equal(refused.admitted, false);
    // a1 was last active at 0 and expires after 100 ms: 60 ms from now, rounded up to 1 s.
    assert.equal(refused.admitted === false && refused.retryAfterMs, 1000);
    assert.deepEqual(refused.released, []);
    assert.deepEqual(registry.values().sort(), ['A1', 'B1']);
    assert.equal(registry.admission(loner).admitted, false);
  });

  test('at the global cap an owner at its own limit may still replace its own session', () => {
    const { registry } = setup({ maxSessions: 2, maxSessionsPerKey: 1 });
    registry.add('a1', 'A1', alice);
    registry.add('b1', 'B1', bob);
    const replaced = registry.add('a2', 'A2', alice);
    assert.equal(replaced.admitted, true);
    assert.deepEqual(ids(replaced.released), ['a1']);
    assert.deepEqual(registry.values().sort(), ['A2', 'B1']);
  });

  test('at the global cap expired sessions are swept first to make room', () => {
    const { registry, advance } = setup({ maxSessions: 2, idleTtlMs: 50 });
    registry.add('a1', 'A1', alice);
    advance(40);
    registry.add('b1', 'B1', bob);
    advance(20);
    const added = registry.add('l1', 'L1', loner);
    assert.equal(added.admitted, true);
    assert.deepEqual(added.released, [{ id: 'a1', value: 'A1', reason: 'expired' }]);
    assert.deepEqual(registry.values().sort(), ['B1', 'L1']);
  });

  test('delete returns what was there and frees the owner\'s slot', () => {
    const { registry } = setup({ maxSessionsPerKey: 1 });
    registry.add('a', 'A', alice);
    assert.equal(registry.delete('a'), 'A');
    assert.equal(registry.delete('a'), undefined);
    assert.deepEqual(registry.add('b', 'B', alice).released, []);
  });
});
