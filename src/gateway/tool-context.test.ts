import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ToolContext } from './tool-context.ts';

const tool = (name: string) => ({ qualifiedName: name });
function setup(capacity = 3, ttlMs = 1000) {
  let now = 0;
  const context = new ToolContext<{ qualifiedName: string }>({ capacity, ttlMs, now: () => now });
  return { context, advance: (ms: number) => (now += ms) };
}

describe('ToolContext (seed 004 §6)', () => {
  test('rejects a non-positive capacity or TTL', () => {
    assert.throws(() => new ToolContext({ capacity: 0, ttlMs: 1, now: () => 0 }), RangeError);
    assert.throws(() => new ToolContext({ capacity: 1.5, ttlMs: 1, now: () => 0 }), RangeError);
    assert.throws(() => new ToolContext({ capacity: 1, ttlMs: 0, now: () => 0 }), RangeError);
  });

  test('binding is idempotent: a bound tool is refreshed, not duplicated', () => {
    const { context, advance } = setup();
    assert.deepEqual(context.bind([tool('a'), tool('b')]), { added: ['a', 'b'], refreshed: [], evicted: [] });
    advance(10);
    assert.deepEqual(context.bind([tool('a')]), { added: [], refreshed: ['a'], evicted: [] });
    assert.equal(context.discoveredCount, 2);
    assert.equal(context.entry('a')!.lastUsedAt, 10);
    assert.equal(context.entry('a')!.discoveredAt, 0);
    assert.deepEqual(context.list().map((t) => t.qualifiedName), ['a', 'b']);
  });

  test('duplicates inside one batch bind once', () => {
    const { context } = setup();
    assert.deepEqual(context.bind([tool('a'), tool('a')]).added, ['a']);
    assert.equal(context.discoveredCount, 1);
  });

  test('LRU eviction keeps the most recently used within capacity', () => {
    const { context, advance } = setup(2, 10_000);
    context.bind([tool('a')]);
    advance(1);
    context.bind([tool('b')]);
    advance(1);
    context.touch('a');
    advance(1);
    const result = context.bind([tool('c')]);
    assert.deepEqual(result.evicted, ['b']);
    assert.deepEqual(context.list().map((t) => t.qualifiedName).sort(), ['a', 'c']);
  });

  test('TTL phase runs first when over capacity, evicting every stale tool', () => {
    const { context, advance } = setup(3, 100);
    context.bind([tool('old1'), tool('old2')]);
    advance(50);
    context.bind([tool('fresh')]);
    advance(60); // old1/old2 are 110 ms idle (> TTL), fresh is 60 ms idle
    const result = context.bind([tool('x'), tool('y')]);
    assert.deepEqual(result.evicted.sort(), ['old1', 'old2']);
    assert.deepEqual(context.list().map((t) => t.qualifiedName).sort(), ['fresh', 'x', 'y']);
  });

  test('stale tools are kept while the context is within capacity (eviction runs only when over)', () => {
    const { context, advance } = setup(3, 10);
    context.bind([tool('a')]);
    advance(1000);
    assert.deepEqual(context.bind([tool('b')]).evicted, []);
    assert.ok(context.has('a'));
  });

  test('a batch larger than capacity keeps its best-ranked tools', () => {
    const { context } = setup(2);
    const result = context.bind([tool('best'), tool('second'), tool('third'), tool('fourth')]);
    assert.deepEqual(result.added, ['best', 'second']);
    assert.deepEqual(result.evicted.sort(), ['fourth', 'third']);
  });

  test('always-include tools never count toward capacity and are never evicted', () => {
    const { context, advance } = setup(1, 10);
    context.setAlwaysInclude([tool('core1'), tool('core2')]);
    context.bind([tool('a')]);
    advance(100);
    context.bind([tool('b')]);
    assert.ok(context.has('core1') && context.has('core2'));
    assert.equal(context.discoveredCount, 1);
    assert.equal(context.alwaysCount, 2);
    assert.equal(context.evict('core1'), false);
    assert.ok(context.has('core1'));
    assert.deepEqual(context.bind([tool('core1')]), { added: [], refreshed: [], evicted: [] });
    assert.deepEqual(context.list().map((t) => t.qualifiedName), ['core1', 'core2', 'b']);
  });

  test('a discovered tool that becomes always-include leaves the discovered set', () => {
    const { context } = setup(2);
    context.bind([tool('a'), tool('b')]);
    context.setAlwaysInclude([tool('a')]);
    assert.equal(context.discoveredCount, 1);
    assert.ok(context.isAlwaysIncluded('a'));
  });

  test('touch counts uses and refuses unknown tools; evict removes discovered tools', () => {
    const { context } = setup();
    context.bind([tool('a')]);
    assert.equal(context.touch('a'), true);
    assert.equal(context.touch('a'), true);
    assert.equal(context.entry('a')!.useCount, 2);
    assert.equal(context.touch('nope'), false);
    assert.equal(context.evict('a'), true);
    assert.equal(context.evict('a'), false);
    assert.equal(context.has('a'), false);
    assert.equal(context.get('a'), undefined);
  });

  test('ties on timestamps evict the least recently bound first', () => {
    const { context } = setup(2);
    context.bind([tool('a')]);
    context.bind([tool('b')]);
    assert.deepEqual(context.bind([tool('c')]).evicted, ['a']);
  });
});
