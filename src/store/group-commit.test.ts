import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createGroupCommit } from './group-commit.ts';

const rowError = (message: string) => Object.assign(new Error(message), { code: '23505' });

describe('group commit', () => {
  it('resolves each caller once its item is written, grouping what arrives while a write runs', async () => {
    const writes: number[][] = [];
    let release: (() => void) | undefined;
    const writer = createGroupCommit<number>({
      write: async (items) => {
        writes.push(items);
        if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    const first = writer.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    // While the first write runs, three more arrive: one write for them, not three.
    const rest = [writer.submit(2), writer.submit(3), writer.submit(4)];
    let settled = false;
    void first.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'not resolved before its write ends');
    release!();
    await Promise.all([first, ...rest]);
    assert.deepEqual(writes, [[1], [2, 3, 4]]);
    await writer.idle();
  });

  it('a bad row fails only its own caller; a database failure fails the whole group', async () => {
    const stored: number[] = [];
    let down = false;
    const writer = createGroupCommit<number>({
      write: async (items) => {
        if (down) throw new Error('connection refused');
        if (items.includes(13)) throw rowError('duplicate key');
        stored.push(...items);
      },
    });
    const results = await Promise.allSettled([writer.submit(12), writer.submit(13), writer.submit(14)]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(stored.sort(), [12, 14]);
    down = true;
    const failed = await Promise.allSettled([writer.submit(1), writer.submit(2)]);
    assert.deepEqual(failed.map((r) => r.status), ['rejected', 'rejected']);
  });

  it('an item submitted as a write loop ends is still written', async () => {
    const stored: number[] = [];
    const writer = createGroupCommit<number>({ write: async (items) => void stored.push(...items) });
    for (let round = 0; round < 50; round++) {
      const submitted = writer.submit(round);
      // Submitted from the resolution of the previous one: the race between loop end and restart.
      void submitted.then(() => writer.submit(1000 + round));
      await submitted;
    }
    await new Promise((resolve) => setImmediate(resolve));
    await writer.idle();
    assert.equal(stored.length, 100);
  });
});
