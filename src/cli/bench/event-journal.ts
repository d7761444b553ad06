/**
 * @module cli/bench/event-journal
 * What making a selection event durable before its id is returned costs on the hot path
 * (issue #23), on the embedded database in a folder: the journal append `quiver serve` does
 * (one JSON line, one write(2)), against the alternative it replaced, one INSERT per selection
 * (on PGlite each statement runs on the main thread, so that time is event-loop time).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../store/open.ts';
import { openAppendJournal } from '../../store/append-journal.ts';
import { insertSelectionEvents, type SelectionEventWrite } from '../../store/repositories/selection-events.ts';
import { percentileMs, round3 } from './bench-home.ts';

/** What the bench measured (milliseconds per event). */
export interface EventJournalBench {
  events: number;
  /** Bytes of one journaled event. */
  lineBytes: number;
  journalAppend: { p50Ms: number; p99Ms: number; meanMs: number };
  /** One INSERT per event on PGlite in a folder, awaited: the synchronous alternative. */
  pgliteInsert: { p50Ms: number; p99Ms: number; meanMs: number };
  setup: string;
}

function sampleEvent(index: number): SelectionEventWrite {
  return {
    id: randomUUID(),
    queryText: `add observations to an existing entity ${index}`,
    pageContext: null,
    orgId: null,
    userId: null,
    workspaceId: null,
    projectId: null,
    sessionId: 'bench',
    contextKey: 'org:-|tier:-|page:-',
    tier: null,
    provider: 'mcp',
    selectedToolIds: Array.from({ length: 5 }, () => randomUUID()),
    candidateCount: 22,
    selectionMethod: 'hybrid+bandit',
    latencyMs: 0.8,
    stageTimings: { policy: 0.01, candidates: 0.02, context: 0.01, retrieval: 0.4, bandit: 0.1, pins: 0, format: 0.1, total: 0.8 },
    tokensUsed: 900,
    tokensTotal: 4200,
    tokensSaved: 3300,
    warnings: [],
    createdAt: new Date(),
  };
}

function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50Ms: percentileMs(sorted, 50), p99Ms: percentileMs(sorted, 99), meanMs: round3(sorted.reduce((sum, t) => sum + t, 0) / sorted.length) };
}

/** Times `events` journal appends (settled as the batch writer would) and as many single INSERTs on PGlite. */
export async function benchEventJournal(options: { events?: number } = {}): Promise<EventJournalBench> {
  const count = options.events ?? 2_000;
  const root = mkdtempSync(join(tmpdir(), 'quiver-bench-journal-'));
  try {
    const journal = openAppendJournal<SelectionEventWrite>({ directory: join(root, 'journal'), parse: () => undefined });
    const events = Array.from({ length: count }, (_, index) => sampleEvent(index));
    const appendTimes: number[] = [];
    let pending = [];
    for (const event of events) {
      const started = performance.now();
      pending.push(journal.append(event));
      appendTimes.push(performance.now() - started);
      // Settled in batches of 200, as written batches are.
      if (pending.length === 200) {
        for (const ticket of pending) journal.settle(ticket);
        pending = [];
      }
    }
    journal.close();

    const { db } = await openStore({ kind: 'folder', path: join(root, 'data') });
    const insertTimes: number[] = [];
    try {
      for (const event of events.slice(0, Math.min(count, 500))) {
        const started = performance.now();
        await insertSelectionEvents(db, [{ ...event, id: randomUUID() }]);
        insertTimes.push(performance.now() - started);
      }
    } finally {
      await db.close();
    }
    return {
      events: count,
      lineBytes: Buffer.byteLength(`${JSON.stringify(events[0])}\n`),
      journalAppend: stats(appendTimes),
      pgliteInsert: stats(insertTimes),
      setup: 'journal: openAppendJournal in a temp folder, one append per event, settled per 200; insert: insertSelectionEvents of one event on PGlite in a folder (500 events)',
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
