import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEval } from './cli.ts';

function capture() {
  let stdout = '';
  let stderr = '';
  return {
    io: { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}

const jsonl = (rows: unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';

describe('quiver eval', () => {
  let dir: string;
  let tools: string;
  let queries: string;
  let examples: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quiver-eval-'));
    tools = join(dir, 'tools.jsonl');
    queries = join(dir, 'queries.jsonl');
    examples = join(dir, 'examples.jsonl');
    writeFileSync(
      tools,
      jsonl([
        { id: 'weather', name: 'getWeatherForecast', description: 'Weather forecast for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, source: 'meteo' },
        { id: 'stocks', name: 'getStockPrice', description: 'Current price of a stock', description_for_model: 'Use for tickers like AAPL' },
        { id: 'pdf', name: 'pdfToText', description: 'Extract plain text from a PDF document', parameters: null },
        { id: 'games', name: 'learningFun', description: 'Educational games' },
      ]),
    );
    writeFileSync(
      queries,
      jsonl([
        { id: 'q1', query: 'weather forecast for Paris', gold: ['weather'] },
        { id: 'q2', query: 'price of AAPL stock. Then convert my PDF to text.', gold: ['stocks', 'pdf'] },
        { id: 'q3', query: 'my toddler is bored', gold_groups: [['games', 'weather']] },
        { id: 'q4', query: 'something', gold: ['ghost-tool'] },
      ]),
    );
    writeFileSync(examples, jsonl([{ tool_id: 'games', query: 'toddler is bored, ideas?' }, { tool_id: 'nope', query: 'x' }]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one JSON object with the contract keys, warning about unknown gold ids', async () => {
    const out = capture();
    const code = await runEval(['--tools', tools, '--queries', queries, '--examples', examples, '--json'], out.io);
    assert.equal(code, 0, out.stderr);
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const report = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(report), ['n', 'recall@1', 'recall@3', 'recall@5', 'recall@10', 'comp@5', 'comp@10', 'ndcg@10', 'mrr', 'latency_ms', 'embedder']);
    assert.equal(report.n, 3);
    assert.equal(report['recall@10'], 1);
    assert.equal(report['comp@5'], 1);
    assert.equal(report.mrr, 1);
    // Latency percentiles are measured, so only their order is certain: p50 ≤ p95 ≤ p99, all finite.
    const { p50, p95, p99 } = report.latency_ms as { p50: number; p95: number; p99: number };
    assert.ok(Number.isFinite(p99) && p50 <= p95 && p95 <= p99, JSON.stringify(report.latency_ms));
    assert.match(out.stderr, /1 gold id\(s\) not in the tools file were ignored: ghost-tool/);
    assert.match(out.stderr, /1 query without any known gold id skipped/);
    assert.match(out.stderr, /examples\.jsonl: 1 unknown tool id\(s\) ignored: nope/);
  });

  it('adds recall@k for extra cut-offs and prints a table without --json', async () => {
    const json = capture();
    assert.equal(await runEval(['--tools', tools, '--queries', queries, '--k', '2,1,20', '--json'], json.io), 0);
    const report = JSON.parse(json.stdout);
    assert.ok('recall@2' in report && 'recall@20' in report && 'recall@3' in report);
    const table = capture();
    assert.equal(await runEval(['--tools', tools, '--queries', queries], table.io), 0);
    assert.match(table.stdout, /Recall@5\s+0\.667/); // q3 needs the examples file
    assert.match(table.stdout, /latency p50 \/ p95 \/ p99/);
  });

  it('is deterministic', async () => {
    const a = capture();
    const b = capture();
    await runEval(['--tools', tools, '--queries', queries, '--json'], a.io);
    await runEval(['--tools', tools, '--queries', queries, '--json'], b.io);
    const strip = (text: string) => ({ ...JSON.parse(text), latency_ms: null });
    assert.deepEqual(strip(a.stdout), strip(b.stdout));
  });

  it('exits 2 with one line naming the problem', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"id":"a","name":"a","description":"x"}\n\n{"id": "b", oops}\n');
    const noGold = join(dir, 'nogold.jsonl');
    writeFileSync(noGold, '{"id":"q","query":"hello"}\n');
    const duplicate = join(dir, 'dup.jsonl');
    writeFileSync(duplicate, '{"id":"a","name":"a","description":"x"}\n{"id":"a","name":"a","description":"y"}\n');
    const cases: [string[], RegExp][] = [
      [['--tools', join(dir, 'missing.jsonl'), '--queries', queries], /cannot read tools file .*missing\.jsonl: no such file/],
      [['--tools', bad, '--queries', queries], /bad\.jsonl:3: not valid JSON/],
      [['--tools', tools, '--queries', noGold], /nogold\.jsonl:1: .*needs gold or gold_groups/],
      [['--tools', duplicate, '--queries', queries], /dup\.jsonl:2: duplicate tool id 'a'/],
      [['--tools', tools, '--queries', queries, '--k', '0,x'], /--k must be/],
      [['--queries', queries], /--tools and --queries are required/],
      [['--tools', tools, '--queries', queries, '--bogus'], /Unknown option '--bogus'/],
    ];
    for (const [args, pattern] of cases) {
      const out = capture();
      assert.equal(await runEval(args, out.io), 2, args.join(' '));
      assert.equal(out.stdout, '');
      assert.equal(out.stderr.trim().split('\n').length, 1);
      assert.match(out.stderr, pattern);
    }
    const json = capture();
    assert.equal(await runEval(['--tools', bad, '--queries', queries, '--json'], json.io), 2);
    assert.equal(JSON.parse(json.stderr).error.code, 'invalid_input');
  });
});
