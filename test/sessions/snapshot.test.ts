/**
 * A session's state survives the trip through `mcp_sessions.state` (JSON): bound tools keep
 * their TTL/LRU order, the loop guard its windows, the search history its entries (issue #16).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolContext } from '../../src/gateway/tool-context.ts';
import { IterationGuard } from '../../src/gateway/iteration-guard.ts';
import { SearchHistory } from '../../src/gateway/search-history.ts';

const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

test('bound tools keep their LRU order and TTL through a snapshot', () => {
  let now = 1_000;
  const options = { capacity: 3, ttlMs: 10_000, now: () => now };
  const original = new ToolContext<{ qualifiedName: string }>(options);
  original.bind([{ qualifiedName: 'a' }, { qualifiedName: 'b' }, { qualifiedName: 'c' }]);
  now += 100;
  original.touch('a');
  const copy = new ToolContext<{ qualifiedName: string }>(options);
  copy.restore(viaJson(original.snapshot()), (qualifiedName) => ({ qualifiedName }));
  now += 100;
  // Over capacity: the least recently used goes (c: same time as b, ranked lower), on both.
  assert.deepEqual(copy.bind([{ qualifiedName: 'd' }]).evicted, ['c']);
  assert.deepEqual(original.bind([{ qualifiedName: 'd' }]).evicted, ['c']);
  assert.deepEqual(copy.list().map((tool) => tool.qualifiedName).sort(), original.list().map((tool) => tool.qualifiedName).sort());
  assert.equal(copy.entry('a')!.useCount, 1);
  // TTL: after it, the idle ones go first.
  now += 20_000;
  copy.touch('d');
  assert.deepEqual(copy.bind([{ qualifiedName: 'e' }]).evicted.sort(), ['a', 'b']);
});

test('a snapshot holds bound tools by name; restoring looks the definitions up and drops a tool gone meanwhile', () => {
  const now = 1_000;
  const options = { capacity: 5, ttlMs: 10_000, now: () => now };
  type Tool = { qualifiedName: string; description: string; inputSchema: Record<string, unknown> };
  const tool = (name: string, description: string): Tool => ({ qualifiedName: name, description, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } });
  const original = new ToolContext<Tool>(options);
  original.bind([tool('a', 'first'), tool('b', 'second')]);
  const snapshot = viaJson(original.snapshot());
  // Issue #28: names and bookkeeping only, never a description or schema.
  assert.doesNotMatch(JSON.stringify(snapshot), /first|second|inputSchema/);
  assert.deepEqual(snapshot.discovered.map((entry) => entry.name), ['a', 'b']);
  const catalog = new Map([['a', tool('a', 'first, as edited since')]]);
  const copy = new ToolContext<Tool>(options);
  copy.restore(snapshot, (name) => catalog.get(name));
  assert.deepEqual(copy.list().map((bound) => bound.description), ['first, as edited since']);
  assert.equal(copy.entry('a')!.discoveredAt, 1_000);
  // A row written before names-only states carries the whole tool: its name still restores.
  const older = { sequence: 2, discovered: [{ tool: tool('a', 'old copy'), discoveredAt: 500, lastUsedAt: 600, useCount: 2, sequence: 1 }] };
  const fromOlder = new ToolContext<Tool>(options);
  fromOlder.restore(older as never, (name) => catalog.get(name));
  assert.equal(fromOlder.get('a')!.description, 'first, as edited since');
  assert.equal(fromOlder.entry('a')!.useCount, 2);
});

test('the loop guard counts on after a snapshot, and its keys are JSON-safe', () => {
  let now = 0;
  const options = { windowMs: 60_000, maxCallsInWindow: 3, slidingWindowSize: 10, maxInSlidingWindow: 3, now: () => now };
  const original = new IterationGuard(options);
  for (let call = 0; call < 3; call += 1) {
    now += 1000;
    assert.equal(original.record('util__echo', { text: 'same' }).loop, false);
  }
  const snapshot = original.snapshot();
  assert.doesNotMatch(JSON.stringify(snapshot), /\\u0000/, 'no NUL: PostgreSQL jsonb refuses it');
  const copy = new IterationGuard(options);
  copy.restore(viaJson(snapshot));
  now += 1000;
  assert.equal(copy.record('util__echo', { text: 'same' }).loop, true);
  copy.reset('util__echo');
  assert.equal(copy.trackedPairs, 0);
});

test('the search history still finds a redundant search after a snapshot', () => {
  let now = 0;
  const options = { overlapRatio: 0.8, windowMs: 600_000, size: 8, now: () => now };
  const original = new SearchHistory(options);
  original.record('send mail', ['mail__send', 'mail__draft']);
  const copy = new SearchHistory(options);
  copy.restore(viaJson(original.snapshot()));
  now += 5_000;
  const verdict = copy.record('email someone', ['mail__send', 'mail__draft']);
  assert.ok(verdict.redundant && verdict.previousQuery === 'send mail' && verdict.secondsAgo === 5);
});
