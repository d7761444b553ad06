import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAwaitedEvents, createEvents } from './events.ts';

describe('createEvents', () => {
  it('tells every subscriber in order, and no one after it unsubscribed', () => {
    const seen: string[] = [];
    const events = createEvents<number>((error) => assert.fail(String(error)));
    events.emit(0);
    const first = events.subscribe((n) => seen.push(`a${n}`));
    events.subscribe((n) => seen.push(`b${n}`));
    events.emit(1);
    first();
    events.emit(2);
    assert.deepEqual(seen, ['a1', 'b1', 'b2']);
  });

  it('a throwing listener reaches onListenerError and the others still run', () => {
    const errors: unknown[] = [];
    const seen: number[] = [];
    const events = createEvents<number>((error) => errors.push(error));
    events.subscribe(() => {
      throw new Error('listener broke');
    });
    events.subscribe((n) => seen.push(n));
    events.emit(7);
    assert.deepEqual(seen, [7]);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /listener broke/);
  });
});

describe('createAwaitedEvents', () => {
  it('emit settles after every listener has, in order; a rejecting one reaches onListenerError and the others still run', async () => {
    const errors: unknown[] = [];
    const seen: string[] = [];
    const events = createAwaitedEvents<number>((error) => errors.push(error));
    events.subscribe(async (n) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen.push(`slow${n}`);
    });
    events.subscribe(async () => {
      throw new Error('listener rejected');
    });
    const remove = events.subscribe((n) => void seen.push(`fast${n}`));
    await events.emit(1);
    assert.deepEqual(seen, ['slow1', 'fast1'], 'all listeners are done when emit settles');
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /listener rejected/);
    remove();
    await events.emit(2);
    assert.deepEqual(seen, ['slow1', 'fast1', 'slow2']);
  });
});
