/**
 * @module retrieval/embedders/transformers
 * A local sentence-transformer (e.g. all-MiniLM-L6-v2, 384 dims, seed 001 §5.4) run by
 * transformers.js from a model folder the user provides. Remote downloads are switched off
 * (`env.allowRemoteModels = false`): Quiver never fetches weights. `@huggingface/transformers`
 * is an optional package loaded only when this embedder is first used, so installs without
 * it pay nothing; a missing package or a missing / broken model folder is a clear
 * `embedder_unavailable` QuiverError, and the retrieval index then ranks lexically with a
 * warning (DESIGN §3.3).
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import { batches, normalizeInPlace, type Embedder } from './embedder.ts';

/** The slice of the transformers.js module this embedder uses (declared, not imported). */
export interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options?: Record<string, unknown>,
  ): Promise<FeatureExtractor>;
}

/** A feature-extraction pipeline: texts in, a [batch, dims] tensor out. */
export type FeatureExtractor = ((
  texts: string[],
  options: { pooling: 'mean' | 'cls'; normalize: boolean },
) => Promise<{ data: ArrayLike<number>; dims: readonly number[] }>) & { dispose?: () => Promise<void> };

/** Settings of the transformers.js embedder. */
export interface TransformersEmbedderSettings {
  /** Folder holding the model: config.json, tokenizer.json and onnx/model*.onnx. */
  modelPath: string;
  /** Expected vector size; checked against the model's output (default: learned on first use). */
  dimensions?: number;
  /** Pooling of token vectors (default 'mean', as sentence-transformers models expect). */
  pooling?: 'mean' | 'cls';
  /** Texts per forward pass (default 32). */
  maxBatchSize?: number;
  /** Use the quantised ONNX weights (onnx/model_quantized.onnx) when present (default false). */
  quantized?: boolean;
  /** Loads the transformers.js module (default: dynamic import of `@huggingface/transformers`). */
  importModule?: () => Promise<TransformersModule>;
}

const packageName = '@huggingface/transformers';

async function defaultImport(): Promise<TransformersModule> {
  try {
    // A variable specifier keeps bundlers and the type checker from requiring the package.
    const specifier: string = packageName;
    return (await import(specifier)) as TransformersModule;
  } catch (error) {
    throw new QuiverError(
      'embedder_unavailable',
      `the transformers embedder needs the optional package ${packageName}: run \`npm install ${packageName}\` (${(error as Error).message.split('\n')[0]})`,
      { cause: error, kind: 'user' },
    );
  }
}

/** Checks the model folder before handing it to transformers.js, so mistakes read clearly. */
export async function checkModelFolder(modelPath: string, quantized = false): Promise<void> {
  const folder = resolve(modelPath);
  const unavailable = (message: string, cause?: unknown): QuiverError =>
    new QuiverError('embedder_unavailable', `model folder ${folder}: ${message}`, { kind: 'user', cause });
  try {
    if (!(await stat(folder)).isDirectory()) throw unavailable('is not a directory');
  } catch (error) {
    if (error instanceof QuiverError) throw error;
    throw unavailable('does not exist', error);
  }
  let config: unknown;
  try {
    config = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8'));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw unavailable(missing ? 'config.json is missing' : `config.json is not valid JSON (${(error as Error).message})`, error);
  }
  if (config === null || typeof config !== 'object' || typeof (config as Record<string, unknown>).model_type !== 'string') {
    throw unavailable('config.json has no model_type (is this a transformers model folder?)');
  }
  try {
    await stat(join(folder, 'tokenizer.json'));
  } catch (error) {
    throw unavailable('tokenizer.json is missing', error);
  }
  const weights = join(folder, 'onnx', quantized ? 'model_quantized.onnx' : 'model.onnx');
  try {
    await stat(weights);
  } catch (error) {
    throw unavailable(`ONNX weights ${weights} are missing (export the model to ONNX, e.g. with optimum)`, error);
  }
}

/** Creates a lazily loaded transformers.js embedder over a local model folder. */
export function createTransformersEmbedder(settings: TransformersEmbedderSettings): Embedder {
  const folder = resolve(settings.modelPath);
  const pooling = settings.pooling ?? 'mean';
  const maxBatchSize = settings.maxBatchSize ?? 32;
  let dimensions = settings.dimensions ?? 0;
  let loading: Promise<FeatureExtractor> | undefined;

  const load = (): Promise<FeatureExtractor> => {
    loading ??= (async () => {
      await checkModelFolder(folder, settings.quantized ?? false);
      const transformers = await (settings.importModule ?? defaultImport)();
      transformers.env.allowRemoteModels = false;
      transformers.env.allowLocalModels = true;
      transformers.env.localModelPath = dirname(folder);
      try {
        return await transformers.pipeline('feature-extraction', basename(folder), {
          local_files_only: true,
          dtype: settings.quantized ? 'q8' : 'fp32',
        });
      } catch (error) {
        throw new QuiverError('embedder_unavailable', `cannot load the model in ${folder}: ${(error as Error).message.split('\n')[0]}`, {
          kind: 'user',
          cause: error,
        });
      }
    })();
    // A failed load is not cached: the user may fix the folder and try again.
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  return {
    specificationVersion: 'v1',
    provider: 'transformers',
    modelId: `transformers:${basename(folder)}:${pooling}${settings.quantized ? ':q8' : ''}`,
    get dimensions() {
      return dimensions;
    },
    maxBatchSize,
    async embed(texts) {
      const extractor = await load();
      const result: Float32Array[] = [];
      for (const batch of batches(texts, maxBatchSize)) {
        const output = await extractor([...batch], { pooling, normalize: true });
        const [rows, width] = output.dims;
        if (rows !== batch.length || !width || output.data.length !== rows * width) {
          throw new QuiverError('embedder_failed', `model in ${folder} returned a tensor of shape [${output.dims.join(', ')}] for ${batch.length} texts`, {
            kind: 'operational',
          });
        }
        if (dimensions === 0) dimensions = width;
        if (width !== dimensions) {
          throw new QuiverError('embedder_failed', `model in ${folder} returns ${width}-dimensional vectors, expected ${dimensions}`, { kind: 'user' });
        }
        for (let r = 0; r < rows; r++) {
          result.push(normalizeInPlace(Float32Array.from(Array.prototype.slice.call(output.data, r * width, (r + 1) * width) as number[])));
        }
      }
      return result;
    },
    async close() {
      const pending = loading;
      loading = undefined;
      const extractor = await pending?.catch(() => undefined);
      await extractor?.dispose?.();
    },
  };
}
