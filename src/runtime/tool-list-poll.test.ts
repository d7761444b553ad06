import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollToolList, type ListedTools } from './tool-list-poll.ts';

const waitFor = async (check: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('polling a 2026 plugin tool list by its ttlMs (issue #24)', () => {
  it('reports a changed list once, not an unchanged one, and stops on demand', async () => {
    const pages: ListedTools[] = [
      { tools: [{ name: 'a' }], ttlMs: 1 },
      { tools: [{ name: 'a' }], ttlMs: 1 },
      { tools: [{ name: 'a' }, { name: 'b' }], ttlMs: 1 },
      { tools: [{ name: 'a' }, { name: 'b' }], ttlMs: 1 },
    ];
    let reads = 0;
    let changes = 0;
    const stop = pollToolList(async () => pages[Math.min(reads++, pages.length - 1)]!, () => (changes += 1), 1);
    await waitFor(() => reads >= 5);
    stop();
    const after = reads;
    assert.equal(changes, 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.ok(reads <= after + 1, 'no reads after stop');
  });

  it('does not poll a list without a positive ttlMs, nor after a failed read', async () => {
    let reads = 0;
    pollToolList(async () => (reads++, { tools: [], ttlMs: 0 }), () => assert.fail('no change'), 1);
    let failing = 0;
    pollToolList(async () => {
      failing += 1;
      throw new Error('closed');
    }, () => assert.fail('no change'), 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reads, 1);
    assert.equal(failing, 1);
  });
});
