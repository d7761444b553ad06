/**
 * Learning from use on a public stream (issue #25): MetaTool's public dev requests (bench/data,
 * MIT) replayed through a real App with 25 % wrong feedback. The organisation that reports
 * outcomes ranks better than the static control; another organisation replayed afterwards
 * learned nothing and ranks like the control. Small on purpose (eight tools' requests over
 * the whole 199-tool catalog, two passes), so the suite stays quick.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { loadEvalData } from '../../src/retrieval/eval/load.ts';
import { createSeededRandom } from '../../src/selection/random.ts';
import { loadReplayCatalog, runReplay, shuffled, type ReplayReport } from '../../src/selection/replay/replay.ts';
import type { EvalQuery } from '../../src/retrieval/eval/load.ts';
import { describeEachBackend } from '../helpers/backends.ts';

const bench = (file: string) => fileURLToPath(new URL(`../../bench/data/metatool/${file}`, import.meta.url));

describeEachBackend('learning replay on a public stream, 25 % wrong feedback (issue #25)', (backend) => {
  let app: App;
  let home: string;
  let control: ReplayReport;
  let acme: ReplayReport;
  let globex: ReplayReport;

  before(async () => {
    const db = await backend.open();
    home = mkdtempSync(join(tmpdir(), 'quiver-public-replay-'));
    const data = await loadEvalData({ tools: bench('tools.jsonl'), queries: bench('dev.jsonl') });
    // The single-tool requests of eight tools (sorted ids, so the choice is fixed), shuffled, twice:
    // the second pass holds requests whose neighbours (and themselves) were taught in the first.
    const chosen = new Set([...new Set(data.queries.flatMap((q) => (q.items.length === 1 ? q.items[0]! : [])))].sort().slice(0, 8));
    const single = data.queries.filter((q) => q.items.length === 1 && q.items[0]!.every((id) => chosen.has(id)));
    const stream: EvalQuery[] = [...shuffled(single, createSeededRandom(3)), ...shuffled(single, createSeededRandom(5))];
    const config = loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_EMBEDDINGS: 'manual' });
    app = await createApp(config, { db, selectionRandom: createSeededRandom(4) });
    const benchIdOf = await loadReplayCatalog(app.catalog, data.documents, { cold: true });
    await app.embeddings.runNow();
    const settings = (orgId: string, feedback: boolean) => ({ k: 5, window: single.length, noise: 0.25, seed: 2, orgId, feedback });
    const settle = () => app.learning.flush();
    control = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('control', false), cold: true, settle });
    acme = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('acme', true), cold: true, settle });
    globex = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('globex', false), cold: true, settle });
  });
  after(async () => {
    await app?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('the organisation that reports outcomes improves over the static ranking, despite the wrong feedback', (t) => {
    t.diagnostic(`R@1 / R@5 per pass: static ${control.windows.map((w) => `${w['recall@1']}/${w['recall@5']}`).join(', ')}; acme ${acme.windows.map((w) => `${w['recall@1']}/${w['recall@5']}`).join(', ')}; globex ${globex.overall['recall@1']}`);
    assert.ok(acme.overall.noisy > 0.1, `noise share ${acme.overall.noisy}`);
    const last = acme.windows.at(-1)!;
    const still = control.windows.at(-1)!;
    // +0.06 (4 of 64 requests): since the bandit stopped drawing untried tools (issue #25) the
    // static control ranks by relevance, R@1 0.70-0.72 -> 0.80 on this stream, while acme's
    // second pass stayed at 0.875; the margin was +0.1 over the noisier control.
    assert.ok(last['recall@1'] >= still['recall@1'] + 0.06, `acme last window R@1 ${last['recall@1']} vs static ${still['recall@1']}`);
    assert.ok(last['recall@5'] >= still['recall@5'], `acme last window R@5 ${last['recall@5']} vs static ${still['recall@5']}`);
    assert.ok(last['recall@1'] > acme.windows[0]!['recall@1'], 'the second pass ranks better than the first');
  });

  it('another organisation learned nothing and ranks like the static control', async () => {
    assert.equal((await app.learning.counts('globex')).size, 0);
    assert.ok((await app.learning.counts('acme')).size > 0);
    assert.ok(Math.abs(globex.overall['recall@1'] - control.overall['recall@1']) <= 0.06, `globex ${globex.overall['recall@1']} vs control ${control.overall['recall@1']}`);
    assert.ok(globex.overall['recall@1'] < acme.windows.at(-1)!['recall@1'], 'acme’s learning did not reach globex');
  });
});
