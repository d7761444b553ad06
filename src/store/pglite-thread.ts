/**
 * @module store/pglite-thread
 * The main thread's end of the embedded database's worker (pglite-worker.mjs, issue #28):
 * numbered requests out, replies matched back, notifications routed to their subscription.
 *
 * An open store keeps the process alive until it is closed, as PGlite in the main thread did
 * (and as a node-postgres pool does): the jobs loop and the tests wait on unreferenced timers
 * between statements. If the thread dies, every pending and later request fails: nothing is
 * retried, nothing is answered from memory.
 */
import { Worker } from 'node:worker_threads';
import { mapDatabaseError } from './database-errors.ts';

/** What the worker is asked to do (pglite-worker.mjs implements each). */
export type PGliteRequest =
  | { op: 'open'; dataDir?: string; template?: Uint8Array; wasmModule?: WebAssembly.Module; initdbWasmModule?: WebAssembly.Module; settings: string[] }
  | { op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { op: 'exec'; sql: string }
  | { op: 'batch'; statements: { sql: string; params: readonly unknown[]; stopIfEmpty?: boolean }[] }
  | { op: 'begin'; tx: number }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'listen'; subscription: number; channel: string }
  | { op: 'unlisten'; subscription: number }
  | { op: 'memory' }
  | { op: 'close' };

/** PGlite's WebAssembly, compiled: crosses to another thread without compiling again. */
export interface CompiledEngine {
  wasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
}

/** The answer to `open`: the modules the thread compiled, when the request brought none. */
export interface PGliteOpenReply {
  engine?: CompiledEngine;
}

/** The worker's memory, in bytes (answer to `memory`). */
export interface PGliteThreadMemory {
  /** The thread's own V8 heap: used and reserved. */
  heapUsed: number;
  heapTotal: number;
  /** PGlite's WebAssembly memory (shared buffers, catalogs, sort space); it never shrinks. */
  wasmMemory: number;
}

/** An error as the worker sends it: message, name and the engine's plain fields (SQLSTATE `code`…). */
interface ErrorData {
  name: string;
  message: string;
  fields: Record<string, string | number>;
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: ErrorData };
type Notification = { notification: number; payload: string };

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The worker's file: beside this module in the sources and in dist/ (scripts/build.mjs copies it). */
const WORKER_URL = new URL('./pglite-worker.mjs', import.meta.url);

/** A connection to a PGlite worker thread. */
export class PGliteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #nextId = 1;
  #stopped: Error | undefined;

  constructor() {
    // No inherited flags: the parent's --import hooks (tsx, test preloads) and profilers have
    // nothing to do in a thread that runs plain JavaScript and WebAssembly.
    // A small young generation: what this thread allocates is a result on its way out (rows,
    // then their serialised copy), dead by the next statement, and V8's default nursery (16 MB
    // semi-spaces) stayed resident for nothing. Engine alone with 10,000 tools (memory bench's
    // child, dist, 3 interleaved runs each, load 2.2-2.6): RSS 424/410/411 MB with the default,
    // 378/377/371 with 4 MB, CPU 7.4/7.1/6.9 vs 7.4/6.5/6.6 s.
    this.#worker = new Worker(WORKER_URL, { execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    this.#worker.on('message', (message: Reply | Notification) => this.#receive(message));
    this.#worker.on('error', (error) => this.#stop(new Error(`the embedded database thread failed: ${error.message}`, { cause: error })));
    this.#worker.on('exit', (code) => this.#stop(new Error(`the embedded database thread exited (code ${code})`)));
  }

  /**
   * Sends one request; resolves to its result or rejects with the engine's error (mapped as
   * in-thread). Buffers in `transfer` are moved to the thread (detached here), not copied.
   */
  request<Result = unknown>(request: PGliteRequest, transfer: ArrayBuffer[] = []): Promise<Result> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise<Result>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.#worker.postMessage({ ...request, id }, transfer);
      } catch (error) {
        // A parameter that cannot be cloned (a function, a symbol): the caller's mistake, said plainly.
        this.#settle(id);
        reject(new TypeError(`a statement parameter cannot be sent to the database: ${(error as Error).message}`));
      }
    });
  }

  /** Routes the worker's notifications of `subscription` to `handler`. */
  onNotification(subscription: number, handler: (payload: string) => void): void {
    this.#listeners.set(subscription, handler);
  }

  dropNotifications(subscription: number): void {
    this.#listeners.delete(subscription);
  }

  /** Ends the thread (after `close` was answered, or to give up on a store that failed to open). */
  async terminate(): Promise<void> {
    this.#stop(new Error('the embedded database is closed'));
    await this.#worker.terminate();
  }

  #receive(message: Reply | Notification): void {
    if ('notification' in message) {
      this.#listeners.get(message.notification)?.(message.payload);
      return;
    }
    if (this.#stopped) return; // its request was already failed by #stop
    const pending = this.#settle(message.id);
    if (!pending) return;
    if (message.ok) pending.resolve(message.result);
    else pending.reject(mapDatabaseError(toError(message.error)));
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    return pending;
  }

  #stop(reason: Error): void {
    if (this.#stopped) return;
    this.#stopped = reason;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject } of pending) reject(reason);
  }
}

/** The worker's error as an Error of this thread: same message, name and engine fields (`code`…). */
function toError(data: ErrorData): Error {
  const error = new Error(data.message);
  Object.assign(error, data.fields);
  error.name = data.name;
  return error;
}
