/**
 * `quiver eval --replay` end to end (issue #13): a generated stream replayed through a real App
 * (catalog sync, logged selections, outcomes through the gateway's queue, bandit arms in the
 * store), on PGlite and PostgreSQL, and the CLI command on its in-memory store.
 *
 * The catalog is built so retrieval alone ranks a decoy first: only outcomes fed back through
 * the real path can lift the gold tool to rank 1, so the replay's windows improve only if
 * outcomes were recorded, and another organisation's ranking stays cold only if the learning
 * is kept per organisation.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/store/database.ts';
import { createSeededRandom } from '../../src/selection/random.ts';
import { loadReplayCatalog, runReplay, type ReplayReport } from '../../src/selection/replay/replay.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { runInProcess } from '../helpers/cli.ts';

const tools = [
  // The decoy: shares the request's words, so retrieval ranks it first.
  { id: 'pdf_convert', name: 'pdf_convert', description: 'Convert PDF files to text, Word or HTML documents' },
  // The gold tool: what these users actually call.
  { id: 'scan_reader', name: 'scan_reader', description: 'Read the words of scanned pages and photos of documents' },
  { id: 'weather', name: 'weather', description: 'Weather forecast for a city' },
  { id: 'stocks', name: 'stocks', description: 'Current price of a stock ticker' },
  { id: 'email', name: 'email', description: 'Send an email message' },
  { id: 'calendar', name: 'calendar', description: 'Schedule a meeting in the calendar' },
  { id: 'translate', name: 'translate', description: 'Translate text between languages' },
  { id: 'maps', name: 'maps', description: 'Directions between two places' },
];
const phrasings = ['turn this scanned pdf into text', 'get the text out of my scanned pdf', 'convert a scanned document pdf to text', 'pdf scan to text please'];
const stream = Array.from({ length: 100 }, (_, i) => ({ id: `q${i}`, query: phrasings[i % phrasings.length]!, items: [['scan_reader']] }));

const settings = (orgId: string, feedback: boolean) => ({ k: 3, window: 25, noise: 0, seed: 2, orgId, feedback });

describeEachBackend('quiver eval --replay through the real selection path', (backend) => {
  let db: Database;
  let app: App;
  let home: string;
  let benchIdOf: Map<string, string>;
  let control: ReplayReport;
  let acme: ReplayReport;
  let globex: ReplayReport;

  before(async () => {
    db = await backend.open();
    home = mkdtempSync(join(tmpdir(), 'quiver-replay-'));
    const config = loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_EMBEDDINGS: 'manual' });
    app = await createApp(config, { db, selectionRandom: createSeededRandom(4) });
    benchIdOf = await loadReplayCatalog(app.catalog, tools, { cold: true });
    await app.embeddings.runNow();
    // Static first (nothing learned anywhere), then acme learns, then globex runs static.
    control = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('control', false), cold: true });
    acme = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('acme', true), cold: true });
    globex = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: settings('globex', false), cold: true });
  });
  after(async () => {
    await app?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('registers the stream’s catalog through plugin sync and reports windows of the stream', () => {
    assert.equal(benchIdOf.size, tools.length);
    assert.deepEqual(acme.windows.map((w) => [w.from, w.to, w.n]), [[1, 25, 25], [26, 50, 25], [51, 75, 25], [76, 100, 25]]);
    assert.equal(acme.overall.n, 100);
    assert.ok(control.overall['recall@3'] >= 0.9, 'the gold tool is offered (in the top 3) without learning');
  });

  it('improves with recorded outcomes: the gold tool rises to rank 1 only when outcomes are fed back', () => {
    assert.ok(control.overall['recall@1'] < 0.3, `static R@1 ${control.overall['recall@1']}: retrieval alone ranks the decoy first`);
    const last = acme.windows.at(-1)!;
    assert.ok(last['recall@1'] >= 0.6, `acme's last window R@1 ${last['recall@1']}`);
    assert.ok(last['recall@1'] > control.windows.at(-1)!['recall@1'] + 0.4, 'learning from outcomes beats the static ranking');
    assert.ok(last['recall@1'] >= acme.windows[0]!['recall@1'], 'the last window is no worse than the first');
    assert.equal(acme.overall.called, 1, 'the gold tool was offered and called every time');
  });

  it('stored the outcomes and the bandit arms under acme’s organisation key only', async () => {
    const events = await db.query<{ org_id: string; with_outcome: number; total: number }>(
      `SELECT org_id, count(*) FILTER (WHERE outcome_at IS NOT NULL)::int AS with_outcome, count(*)::int AS total
         FROM tool_selection_events GROUP BY org_id ORDER BY org_id`,
    );
    assert.deepEqual(events.rows.map((r) => [r.org_id, Number(r.with_outcome), Number(r.total)]), [['acme', 100, 100], ['control', 0, 100], ['globex', 0, 100]]);
    const arms = await db.query<{ context_key: string; name: string; alpha: number; total_successes: number }>(
      `SELECT s.context_key, t.name, s.alpha, s.total_successes FROM tool_bandit_stats s JOIN tools t ON t.id = s.tool_id ORDER BY s.context_key, t.name`,
    );
    assert.ok(arms.rows.length > 0);
    assert.ok(arms.rows.every((r) => r.context_key === 'any:any:general:org=acme'), `keys: ${[...new Set(arms.rows.map((r) => r.context_key))].join(', ')}`);
    const gold = arms.rows.find((r) => r.name === 'scan_reader')!;
    assert.equal(Number(gold.total_successes), 100);
    assert.equal(Number(gold.alpha), 101);
  });

  it('with retryOnMiss, a miss searches again in its session for 2k tools and what that finds is taught', async () => {
    const topOne = (orgId: string, retryOnMiss: boolean) => ({ ...settings(orgId, true), k: 1, retryOnMiss });
    const solo = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: topOne('solo', false), cold: true });
    const retry = await runReplay({ engine: app.selection, queries: stream, benchIdOf, settings: topOne('retry', true), cold: true });
    assert.equal(retry.retryOnMiss, true);
    assert.equal(solo.retryOnMiss, false);
    const events = await db.query<{ org_id: string; n: number; sessions: number }>(
      `SELECT org_id, count(*)::int AS n, count(DISTINCT session_id)::int AS sessions FROM tool_selection_events WHERE org_id IN ('solo', 'retry') GROUP BY org_id ORDER BY org_id`,
    );
    const misses = (report: ReplayReport) => Math.round((1 - report.overall.called) * report.overall.n);
    assert.ok(misses(retry) > 0, 'the first search missed at least once');
    // One more selection per miss, in the miss's own session.
    assert.deepEqual(events.rows.map((r) => [r.org_id, Number(r.n), Number(r.sessions)]), [['retry', 100 + misses(retry), 100], ['solo', 100, 100]]);
    const successes = await db.query<{ context_key: string; total_successes: number }>(
      `SELECT s.context_key, s.total_successes FROM tool_bandit_stats s JOIN tools t ON t.id = s.tool_id WHERE t.name = 'scan_reader' AND s.context_key LIKE '%org=solo' OR t.name = 'scan_reader' AND s.context_key LIKE '%org=retry' ORDER BY s.context_key`,
    );
    const [retryGold, soloGold] = successes.rows.map((r) => Number(r.total_successes));
    assert.ok((retryGold ?? 0) > (soloGold ?? 0), `gold called ${retryGold} times with retries, ${soloGold} without`);
  });

  it('keeps another organisation cold: globex after acme ranks like the static control', () => {
    assert.ok(globex.overall['recall@1'] < 0.3, `globex R@1 ${globex.overall['recall@1']} (acme's ${acme.overall['recall@1']})`);
    assert.ok(Math.abs(globex.overall['recall@1'] - control.overall['recall@1']) <= 0.15);
  });
});

describe('quiver eval --replay (CLI)', () => {
  let dir: string;
  let toolsFile: string;
  let queriesFile: string;
  const jsonl = (rows: unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quiver-replay-cli-'));
    toolsFile = join(dir, 'tools.jsonl');
    queriesFile = join(dir, 'queries.jsonl');
    writeFileSync(toolsFile, jsonl(tools));
    writeFileSync(queriesFile, jsonl(stream.slice(0, 40).map((q) => ({ id: q.id, query: q.query, gold: ['scan_reader'] }))));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the windows as JSON on a fresh in-memory store, reproducibly with --seed', async () => {
    const argv = ['eval', '--replay', '--tools', toolsFile, '--queries', queriesFile, '--cold', '--window', '10', '--top-k', '3', '--feedback-noise', '0.25', '--seed', '7', '--json'];
    const env = { QUIVER_HOME: dir, QUIVER_LOG_LEVEL: 'silent' };
    const first = await runInProcess(argv, env);
    assert.equal(first.code, 0, first.stderr);
    const report = JSON.parse(first.stdout) as ReplayReport;
    assert.equal(report.queries, 40);
    assert.equal(report.k, 3);
    assert.equal(report.noise, 0.25);
    assert.deepEqual(report.windows.map((w) => w.n), [10, 10, 10, 10]);
    for (const w of report.windows) for (const key of ['recall@1', 'recall@3', 'recall@5', 'mrr', 'called', 'noisy'] as const) assert.ok(w[key] >= 0 && w[key] <= 1, `${key} ${w[key]}`);
    assert.ok(report.overall.noisy > 0.1 && report.overall.noisy < 0.45, `noise share ${report.overall.noisy}`);
    const again = await runInProcess(argv, env);
    assert.deepEqual((JSON.parse(again.stdout) as ReplayReport).windows, report.windows, 'same seed, same windows');
    assert.equal(report.retryOnMiss, false);
    const retried = await runInProcess([...argv, '--retry-on-miss'], env);
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal((JSON.parse(retried.stdout) as ReplayReport).retryOnMiss, true);
  });

  it('refuses bad replay options with exit 2', async () => {
    const base = ['eval', '--replay', '--tools', toolsFile, '--queries', queriesFile];
    for (const extra of [['--feedback-noise', '1.5'], ['--window', '0'], ['--top-k', 'x'], ['--k', '1,5']]) {
      const result = await runInProcess([...base, ...extra], { QUIVER_HOME: dir });
      assert.equal(result.code, 2, `${extra.join(' ')}: ${result.stderr}`);
    }
    assert.equal((await runInProcess(['eval', '--replay', '--tools', toolsFile], { QUIVER_HOME: dir })).code, 2);
  });
});
