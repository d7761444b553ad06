import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransformersEmbedder, type TransformersModule } from './transformers.ts';
import { createRetrievalIndex } from '../retrieval-index.ts';
import { isQuiverError } from '../../core/errors.ts';

describe('transformers.js embedder', () => {
  let root: string;
  let good: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-model-'));
    good = join(root, 'mini-model');
    mkdirSync(join(good, 'onnx'), { recursive: true });
    writeFileSync(join(good, 'config.json'), JSON.stringify({ model_type: 'bert' }));
    writeFileSync(join(good, 'tokenizer.json'), '{}');
    writeFileSync(join(good, 'onnx', 'model.onnx'), 'weights');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const unavailable = (pattern: RegExp) => (error: unknown) => isQuiverError(error, 'embedder_unavailable') && pattern.test((error as Error).message);

  it('reports a missing folder, a broken config, and missing files clearly', async () => {
    await assert.rejects(createTransformersEmbedder({ modelPath: join(root, 'absent') }).embed(['x']), unavailable(/does not exist/));
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'config.json'), '{ not json');
    await assert.rejects(createTransformersEmbedder({ modelPath: broken }).embed(['x']), unavailable(/config\.json is not valid JSON/));
    writeFileSync(join(broken, 'config.json'), '{}');
    await assert.rejects(createTransformersEmbedder({ modelPath: broken }).embed(['x']), unavailable(/no model_type/));
    writeFileSync(join(broken, 'config.json'), '{"model_type":"bert"}');
    await assert.rejects(createTransformersEmbedder({ modelPath: broken }).embed(['x']), unavailable(/tokenizer\.json is missing/));
    writeFileSync(join(broken, 'tokenizer.json'), '{}');
    await assert.rejects(createTransformersEmbedder({ modelPath: broken }).embed(['x']), unavailable(/ONNX weights .* are missing/));
  });

  it('says how to install the optional package when it cannot be imported', async () => {
    const embedder = createTransformersEmbedder({
      modelPath: good,
      importModule: async () => {
        throw Object.assign(new Error("Cannot find package '@huggingface/transformers'"), { code: 'ERR_MODULE_NOT_FOUND' });
      },
    });
    await assert.rejects(embedder.embed(['x']), /Cannot find package/);
    // The real import path: the package is not a dependency of this repository.
    let installed = true;
    try {
      await import('@huggingface/transformers' as string);
    } catch {
      installed = false;
    }
    if (!installed) {
      await assert.rejects(createTransformersEmbedder({ modelPath: good }).embed(['x']), unavailable(/npm install @huggingface\/transformers/));
    }
  });

  it('loads the model offline, mean-pools and normalises, in batches', async () => {
    const calls: { model: string; options: Record<string, unknown> | undefined }[] = [];
    const batchSizes: number[] = [];
    const module: TransformersModule = {
      env: { allowRemoteModels: true, allowLocalModels: false, localModelPath: '' },
      async pipeline(_task, model, options) {
        calls.push({ model, options });
        return async (texts, options2) => {
          assert.deepEqual(options2, { pooling: 'mean', normalize: true });
          batchSizes.push(texts.length);
          return { data: Float32Array.from(texts.flatMap((t) => [t.length, 0, 0])), dims: [texts.length, 3] };
        };
      },
    };
    const embedder = createTransformersEmbedder({ modelPath: good, maxBatchSize: 2, importModule: async () => module });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    assert.equal(module.env.allowRemoteModels, false);
    assert.equal(module.env.localModelPath, root);
    assert.deepEqual(calls, [{ model: 'mini-model', options: { local_files_only: true, dtype: 'fp32' } }]);
    assert.deepEqual(batchSizes, [2, 1]);
    assert.deepEqual(Array.from(vectors[2]!), [1, 0, 0]);
    assert.equal(embedder.dimensions, 3);
    await embedder.embed(['again']);
    assert.equal(calls.length, 1, 'the pipeline is loaded once');
    await embedder.close?.();
  });

  it('turns a pipeline failure or a wrong tensor shape into clear errors, and retries a failed load', async () => {
    let attempts = 0;
    const module: TransformersModule = {
      env: { allowRemoteModels: true, allowLocalModels: false, localModelPath: '' },
      async pipeline() {
        attempts++;
        if (attempts === 1) throw new Error('Could not locate file: "onnx/model.onnx"\nstack');
        return async () => ({ data: new Float32Array(5), dims: [1, 5] });
      },
    };
    const embedder = createTransformersEmbedder({ modelPath: good, importModule: async () => module });
    await assert.rejects(embedder.embed(['x']), unavailable(/cannot load the model .*Could not locate file/));
    await assert.rejects(embedder.embed(['x', 'y']), /tensor of shape \[1, 5\] for 2 texts/);
    assert.equal(attempts, 2);
  });

  it('lets the retrieval index fall back to lexical ranking with a warning', async () => {
    const index = createRetrievalIndex({ embedder: createTransformersEmbedder({ modelPath: join(root, 'absent') }) });
    await index.build([{ id: 'pdf', name: 'pdfToText', description: 'Extract text from a PDF' }]);
    const { results, warnings } = await index.search('pdf text');
    assert.equal(results[0]?.id, 'pdf');
    assert.match(warnings.join('\n'), /does not exist/);
  });
});
