/**
 * The shipped sentence-embedding model (issue #25): it loads from the installed package with the
 * network switched off (a child process in its own empty network namespace), puts paraphrases
 * closer than unrelated sentences, and falls back to the hashed embedder, with a warning that
 * /readyz and `quiver embeddings status` show, when its files are missing or broken.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, copyFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipUnless } from '../helpers/requirements.ts';
import { createShippedModelEmbedder } from '../../src/retrieval/embedders/shipped-model.ts';
import { installedUseLiteDir } from '../../src/retrieval/embedders/use-lite.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'quiver-model-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Why a child cannot run without a network here (unshare needs CAP_SYS_ADMIN), or undefined. */
function noNetworkProblem(): string | undefined {
  const probe = spawnSync('unshare', ['--net', 'true'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `cannot create a network namespace (unshare --net: ${probe.error?.message ?? probe.stderr.trim()})`;
}

describe('shipped model (USE-Lite from the installed package)', () => {
  it('loads with the network off and puts paraphrases closer than unrelated sentences', { skip: skipUnless(noNetworkProblem()), timeout: 120_000 }, () => {
    const script = join(scratch, 'similarities.mts');
    writeFileSync(
      script,
      `import { createShippedModelEmbedder } from ${JSON.stringify(join(root, 'src/retrieval/embedders/shipped-model.ts'))};
import { dot } from ${JSON.stringify(join(root, 'src/retrieval/embedders/embedder.ts'))};
const embedder = createShippedModelEmbedder();
// Four pairs of paraphrases that share few words; each text's nearest other text must be its partner.
const texts = [
  'what will the weather be like in Paris tomorrow', 'get the weather forecast for a city',
  'send an email to my boss', 'compose and deliver a mail message to a contact',
  'convert this PDF into plain text', 'extract the text from a pdf document',
  'play some relaxing music', 'put on some calm songs',
];
const vectors = await embedder.embed(texts);
const nearest = vectors.map((v, i) => {
  let best = -1, bestScore = -2;
  vectors.forEach((w, j) => { if (j !== i && dot(v, w) > bestScore) { bestScore = dot(v, w); best = j; } });
  return best;
});
const pairs = [0, 2, 4, 6].map((i) => dot(vectors[i], vectors[i + 1]));
console.log(JSON.stringify({ status: embedder.status(), dimensions: vectors[0].length, pairs, nearest }));
await embedder.close();
`,
    );
    const child = spawnSync('unshare', ['--net', process.execPath, '--import', 'tsx', script], { cwd: root, encoding: 'utf8', timeout: 110_000 });
    assert.equal(child.status, 0, child.stderr);
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      status: { fallback: boolean; active: string; provider: string };
      dimensions: number;
      pairs: number[];
      nearest: number[];
    };
    assert.equal(report.status.fallback, false, 'the model itself, not the fallback');
    assert.equal(report.status.provider, 'use-lite');
    assert.equal(report.dimensions, 512);
    assert.deepEqual(report.nearest, [1, 0, 3, 2, 5, 4, 7, 6], `nearest texts ${report.nearest} (paraphrase similarities ${report.pairs})`);
    for (const similarity of report.pairs) assert.ok(similarity > 0.5, `paraphrase similarity ${similarity}`);
  });

  it('falls back to the hashed embedder, with a warning, when the model files are missing', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    const embedder = createShippedModelEmbedder({ modelDir: empty });
    const status = embedder.status();
    assert.equal(status.fallback, true);
    assert.equal(embedder.provider, 'quiver-offline');
    assert.match(status.warning!, /model\.json is missing/);
    const [vector] = await embedder.embed(['send an email']);
    assert.equal(vector!.length, embedder.dimensions);
  });

  it('falls back on the first embed when the files are there but the model cannot load', { timeout: 60_000 }, async () => {
    const broken = join(scratch, 'broken');
    mkdirSync(broken);
    for (const file of readdirSync(installedUseLiteDir()!)) if (file.startsWith('group1-shard') || file === 'vocab.json') copyFileSync(join(installedUseLiteDir()!, file), join(broken, file));
    writeFileSync(join(broken, 'model.json'), '{"not": "a model"');
    let told = 0;
    const embedder = createShippedModelEmbedder({ modelDir: broken, onFallback: () => told++ });
    assert.equal(embedder.status().fallback, false, 'files present: the model is tried first');
    assert.equal(embedder.provider, 'use-lite');
    const [vector] = await embedder.embed(['send an email']);
    assert.equal(embedder.status().fallback, true);
    assert.equal(embedder.provider, 'quiver-offline');
    assert.equal(vector!.length, embedder.dimensions);
    assert.equal(told, 1);
    await embedder.close?.();
  });

  it('shows the fallback in /readyz (the replica stays ready) and in the embeddings status', async () => {
    const app = await createApp(
      loadConfig({ QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_HOME: join(scratch, 'home'), QUIVER_EMBEDDER: 'model', QUIVER_EMBEDDER_MODEL_PATH: join(scratch, 'nowhere') }),
    );
    try {
      const report = await app.telemetry.readiness.check();
      assert.equal(report.ready, true);
      assert.equal(report.warnings?.length, 1);
      assert.match(report.warnings![0]!, /could not load .*fallback quiver-offline/);
      const status = await app.embeddings.status();
      assert.match(status.fallback!.warning, /could not load/);
      assert.match(status.model, /^quiver-offline/);
    } finally {
      await app.close();
    }
  });

  it('the app ranks with the model when QUIVER_EMBEDDER=model; unset, the product default is the distilled table (the test runner pins the hashed one)', async () => {
    assert.equal(loadConfig({ QUIVER_DATABASE_URL: 'memory://', QUIVER_EMBEDDER: 'model' }).embedder.kind, 'model');
    const { setDefaultEmbedderKind } = await import('../../src/config.ts');
    // The preload (test/setup/cheap-embedder.ts) pins 'offline'; a user gets 'table' (the module's own default).
    assert.equal(loadConfig({ QUIVER_DATABASE_URL: 'memory://' }).embedder.kind, 'offline');
    const fresh = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { loadConfig } from ${JSON.stringify(join(root, 'src/config.ts'))}; console.log(loadConfig({ QUIVER_DATABASE_URL: 'memory://' }).embedder.kind);`], {
      cwd: root,
      encoding: 'utf8',
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'QUIVER_EMBEDDER')),
      timeout: 60_000,
    });
    assert.equal(fresh.status, 0, fresh.stderr);
    assert.equal(fresh.stdout.trim(), 'table');
    setDefaultEmbedderKind('model');
    try {
      assert.equal(loadConfig({ QUIVER_DATABASE_URL: 'memory://' }).embedder.kind, 'model');
    } finally {
      setDefaultEmbedderKind('offline');
    }
  });
});
