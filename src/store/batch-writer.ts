/**
 * @module store/batch-writer
 * Writes that must stay off a hot path (selection events, plugin call events): items are
 * queued and written in batches after `flushMs` or once `batchSize` are waiting. The queue
 * is bounded (the oldest item is dropped when full), a failing batch is reported and never
 * thrown at the producer, and one write runs at a time.
 *
 * Writes coalesce (issue #18 finding 9): items pushed while a write runs wait for it, and
 * after it only full batches are written at once; a partial remainder waits for the timer.
 * Each write costs a fixed few milliseconds of the event loop on the embedded database, so
 * writing whatever arrived during the previous write (one or two items under a steady
 * stream of searches) made one write per couple of searches: 99 inserts for 300 searches.
 *
 * A write never shares a turn of the event loop with other work (issue #18, the stdio
 * `search_tools` p99): the embedded database runs each statement on the main thread, so a
 * write started inside a request (the push that filled a batch) held that request's answer,
 * a backlog written batch after batch held every request that arrived meanwhile until the
 * last batch, and a writer that flushes another first (outcomes after their events) ran both
 * writes back to back. So the loop runs once (I/O first) before each write and after a
 * drain: a request waits for one batch at most, and `batchSize` bounds that wait.
 *
 * A batch goes out in chunks of `chunkSize` rows, one statement each, with a turn of the event
 * loop between them (issue #28, the stdio `search_tools` p99): on the embedded database a
 * statement costs about 1.3 ms of CPU plus 30–40 µs per row, so a 200-row INSERT held the loop
 * for ~7 ms of CPU (17–25 ms median wall-clock on 2 busy cores), a 50-row one for ~3 ms and a
 * 25-row one for ~2 ms. A request that arrives during a flush waits for one short chunk, not the
 * whole batch; the price is the fixed cost of more statements, which is why the chunk is 50 and
 * not smaller (docs/selection.md). Tried and not kept: chunks sized to a CPU budget per statement
 * (3 or 5 ms, from the CPU the previous chunks took per row): an outcome statement's fixed cost is
 * ~3 ms of PGlite CPU, so the chunks fell to 2–4 outcomes, 176–345 outcome statements instead of
 * 14 in the stdio bench and 1.5× the server's CPU; the server's event-loop p99 fell, the searches'
 * p99 did not (2 shared cores: waiting for a core dominated it).
 *
 * A batch mixes the items of unrelated requests (and tenants), so one bad item must not take
 * the others down with it (issue #18, finding 2). When a write fails because of the data
 * (`isRowError`: the store's `invalid_input`, or a raw SQLSTATE of class 22, 23 or 54), the
 * batch is split in halves and each half written again, down to single items: every good item
 * is stored and each bad one is reported alone through `onError(error, [item])`. Any other
 * failure (the database is down, a timeout) says nothing about the rows, so the batch is
 * reported once as a whole instead of hammering a sick database with 2n-1 retries.
 */
import { isQuiverError, ErrorCodes } from '../core/errors.ts';

/** Options of `createBatchWriter`. */
export interface BatchWriterOptions<T> {
  /** Writes one batch (or, after a data error, a part of one); a throw is passed to `onError`. */
  write(batch: T[]): Promise<void>;
  /**
   * Delay before a partial batch is written (ms). With `maxWaitMs`, a quiet period instead:
   * each push moves the write to `flushMs` after it, but never past `maxWaitMs` after the
   * oldest queued item.
   */
  flushMs: number;
  /**
   * Writes wait for a pause in pushes up to this long (ms). On the embedded database a write
   * holds the event loop, so during a burst of requests (each pushing an item) writing every
   * `flushMs` delays one request in every few; writing in the first pause, or once per
   * `maxWaitMs` when none comes, keeps writes between requests (issue #18).
   */
  maxWaitMs?: number;
  batchSize: number;
  /** Most items per `write` (one statement); a batch is written in chunks of this size (default `batchSize`). */
  chunkSize?: number;
  /** Most queued items; beyond it the oldest is dropped. */
  maxQueue: number;
  onDrop?(item: T): void;
  /**
   * Called with the items a failed write lost: one rejected item when the failure was about
   * the data (the rest of its batch is stored), or the whole batch otherwise.
   */
  onError?(error: unknown, batch: T[]): void;
  /** Called once a batch left the queue, written or not. */
  onSettled?(batch: T[]): void;
  /** True when `error` blames the written rows (default: `isRowError`). */
  isRowError?(error: unknown): boolean;
}

/** A bounded, batching write queue. */
export interface BatchWriter<T> {
  push(item: T): void;
  /** Writes everything queued now (waits for a running flush first). */
  flush(): Promise<void>;
  readonly size: number;
}

// SQLSTATE classes that blame the statement's values: 22 data exception (bad text, NUL,
// invalid uuid…), 23 integrity constraint violation, 54 program limit exceeded (too deep).
const ROW_SQLSTATE = /^(22|23|54)[0-9A-Z]{3}$/;

/** True when a write failed because of the values written (not because of the database). */
export function isRowError(error: unknown): boolean {
  if (isQuiverError(error)) return error.code === ErrorCodes.invalidInput;
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && ROW_SQLSTATE.test(code);
}

/** Rows per statement of the event writers (selection events, outcomes, call events): see the module comment. */
export const WRITE_CHUNK_ROWS = 50;

/** Resolves after the event loop has polled for I/O once (setImmediate runs after the poll phase). */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/*
 * One chunk per turn of the event loop across every writer of the process (issue #28, the stdio
 * `search_tools` p99): the selection events, the outcomes and the call events each wait one turn
 * before a chunk, but all three woke in the same check phase after a quiet period and ran their
 * statements back to back (the embedded database's statements settle in microtasks), so a search
 * that arrived then waited for two or three chunks. The event loop is the process's, so this mark
 * is too: it is set when a chunk starts and cleared by an immediate, which runs in the next
 * turn's check phase, after that turn's poll for I/O.
 */
let chunkStartedThisTurn = false;

/** Resolves in a later turn than the caller's, in which no other writer has started a chunk yet. */
async function takeWriteTurn(): Promise<void> {
  do await yieldToEventLoop();
  while (chunkStartedThisTurn);
  chunkStartedThisTurn = true;
  setImmediate(() => {
    chunkStartedThisTurn = false;
  });
}

/** Creates a batch writer. */
export function createBatchWriter<T>(options: BatchWriterOptions<T>): BatchWriter<T> {
  const batchSize = Math.max(1, options.batchSize);
  const chunkSize = Math.max(1, Math.min(batchSize, options.chunkSize ?? batchSize));
  const maxQueue = Math.max(1, options.maxQueue);
  const blamesRows = options.isRowError ?? isRowError;
  const queue: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> | undefined;
  // When the oldest item still queued arrived (for `maxWaitMs`); reset when the queue empties.
  let oldestAt: number | undefined;
  // When the last item was pushed (the quiet period of `maxWaitMs` writers runs from it).
  let lastPushAt: number | undefined;

  // Bisection: a batch of n with one bad item costs about 2·log2(n) extra writes, not n.
  async function writeIsolating(items: T[]): Promise<void> {
    try {
      await options.write(items);
    } catch (error) {
      if (items.length === 1 || !blamesRows(error)) {
        options.onError?.(error, items);
        return;
      }
      const middle = Math.ceil(items.length / 2);
      await writeIsolating(items.slice(0, middle));
      await writeIsolating(items.slice(middle));
    }
  }

  /**
   * Writes full batches; with `all`, also what was queued when it started; each in chunks of at
   * most `chunkSize`, the event loop running between chunks. Items that arrive meanwhile and do
   * not fill a batch wait for the timer.
   */
  async function drain(all: boolean): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    let owed = all ? queue.length : 0;
    let wrote = false;
    while (queue.length >= batchSize || (owed > 0 && queue.length > 0)) {
      // A full batch is owed in turn, and goes out chunk by chunk like the rest.
      if (owed <= 0) owed = batchSize;
      await takeWriteTurn();
      const batch = queue.splice(0, Math.min(chunkSize, owed));
      // What stays queued arrived after this batch began waiting: its wait starts at the write.
      oldestAt = queue.length > 0 ? Date.now() : undefined;
      owed -= batch.length;
      wrote = true;
      try {
        await writeIsolating(batch);
      } finally {
        options.onSettled?.(batch);
      }
    }
    if (wrote) await yieldToEventLoop();
    armTimer();
  }

  /**
   * Arms the write of a partial batch. A push during a quiet period only notes its time: the
   * armed timer, when it fires, re-arms itself for what is left of the new quiet period instead
   * of every push clearing and setting a timer (issue #28: one timer pair per `tools/call` on
   * the stdio call path; now at most one timer per `flushMs` during a burst).
   */
  function armTimer(pushed = false): void {
    if (queue.length === 0) {
      oldestAt = undefined;
      return;
    }
    const now = Date.now();
    oldestAt ??= now;
    if (pushed) lastPushAt = now;
    if (timer !== undefined) return;
    // Arming starts a quiet period, as a push does (after a drain: the rest waits `flushMs`).
    lastPushAt = now;
    schedule(dueAt(now) - now);
  }

  /** When the queued partial batch is to be written: `flushMs` after the last push, capped at `maxWaitMs` after the oldest item. */
  function dueAt(now: number): number {
    if (options.maxWaitMs === undefined) return now + options.flushMs;
    return Math.min((lastPushAt ?? now) + options.flushMs, (oldestAt ?? now) + options.maxWaitMs);
  }

  function schedule(delay: number): void {
    const armedAt = Date.now();
    timer = setTimeout(() => {
      timer = undefined;
      // Pushes since arming moved the quiet period on: wait out the rest of it.
      if (options.maxWaitMs !== undefined && queue.length > 0 && lastPushAt !== undefined && lastPushAt > armedAt) {
        const left = dueAt(Date.now()) - Date.now();
        if (left > 0) return schedule(left);
      }
      void flush();
    }, Math.max(0, delay));
    timer.unref?.();
  }

  function startDrain(all: boolean): Promise<void> {
    flushing = drain(all).finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  async function flush(): Promise<void> {
    while (flushing) await flushing;
    if (queue.length === 0) return;
    await startDrain(true);
  }

  return {
    push(item) {
      if (queue.length >= maxQueue) options.onDrop?.(queue.shift()!);
      queue.push(item);
      // A running write takes the full batches queued meanwhile when it ends.
      if (flushing) return;
      if (queue.length >= batchSize) void startDrain(false);
      else armTimer(true);
    },
    flush,
    get size() {
      return queue.length;
    },
  };
}
