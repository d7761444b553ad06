/**
 * @module store/group-commit
 * Writes that a caller waits for, grouped (issue #23): on a server database an acknowledged
 * record must be a row before the acknowledgement leaves, and one INSERT per request would put a
 * round trip and a commit per request on the database. Items submitted while a write runs go
 * together in the next one, so under load there is one statement per round trip, not per item,
 * and an idle writer starts at once (no timer on the request path).
 *
 * A failed group that blames its rows (`isRowError`) is written again one item at a time, so one
 * bad item fails only its own caller; any other failure fails every caller in the group.
 */
import { isRowError } from './batch-writer.ts';

/** Options of `createGroupCommit`. */
export interface GroupCommitOptions<T> {
  /** Writes one group. */
  write(items: T[]): Promise<void>;
  /** Most items in one write (default 200). */
  maxBatch?: number;
  /** True when `error` blames the written rows (default: the batch writer's `isRowError`). */
  isRowError?(error: unknown): boolean;
}

/** A grouping writer whose callers wait for their own item. */
export interface GroupCommit<T> {
  /** Resolves once `item` is written; rejects with the write's error. */
  submit(item: T): Promise<void>;
  /** Resolves once nothing is waiting or being written. */
  idle(): Promise<void>;
}

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/** Creates a group-commit writer. */
export function createGroupCommit<T>(options: GroupCommitOptions<T>): GroupCommit<T> {
  const maxBatch = Math.max(1, options.maxBatch ?? 200);
  const blamesRows = options.isRowError ?? isRowError;
  const waiting: Array<Waiting<T>> = [];
  let running: Promise<void> | undefined;

  async function writeGroup(group: Array<Waiting<T>>): Promise<void> {
    try {
      await options.write(group.map((entry) => entry.item));
      for (const entry of group) entry.resolve();
    } catch (error) {
      if (group.length === 1 || !blamesRows(error)) {
        for (const entry of group) entry.reject(error);
        return;
      }
      for (const entry of group) await writeGroup([entry]);
    }
  }

  async function run(): Promise<void> {
    // Items submitted in this turn of the event loop join the first group.
    await Promise.resolve();
    while (waiting.length > 0) await writeGroup(waiting.splice(0, maxBatch));
  }

  function start(): void {
    running = run().finally(() => {
      running = undefined;
      // Submitted after the loop's last check, before this callback: not lost.
      if (waiting.length > 0) start();
    });
  }

  return {
    submit(item) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (running === undefined) start();
      });
    },
    async idle() {
      while (running) await running;
    },
  };
}
