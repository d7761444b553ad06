#!/usr/bin/env node
// Prints the retrieval results table of docs/retrieval.md (and the README) by running
// `quiver eval --json` on the three bench configurations in bench/data: Seal-Tools,
// MetaTool cold (no examples) and MetaTool with examples. Usage:
//   node scripts/eval-table.mjs [--bench DIR]
// Runs fully offline with the default embedder; each configuration in its own process, so
// timings do not share a warmed-up JIT.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const root = new URL('..', import.meta.url).pathname;
const benchFlag = process.argv.indexOf('--bench');
const bench = benchFlag > 0 ? process.argv[benchFlag + 1] : join(root, 'bench', 'data');
if (!bench || !existsSync(bench)) {
  console.error(`eval-table: bench folder not found (${bench}); pass --bench DIR`);
  process.exit(2);
}

const configurations = [
  { label: 'Seal-Tools dev (4,076 tools)', set: 'seal-tools', examples: false },
  { label: 'MetaTool dev, cold (199 tools, no examples)', set: 'metatool', examples: false },
  { label: 'MetaTool dev, with examples', set: 'metatool', examples: true },
];

// The eval entry point, run through tsx like bin/quiver.mjs (independent of CLI wiring).
const runner = `import { runEval } from ${JSON.stringify(join(root, 'src/retrieval/eval/cli.ts'))};
process.exitCode = await runEval(process.argv.slice(1), { stdout: process.stdout, stderr: process.stderr });`;

const rows = [];
for (const configuration of configurations) {
  const dir = join(bench, configuration.set);
  const args = ['--tools', join(dir, 'tools.jsonl'), '--queries', join(dir, 'dev.jsonl'), '--json'];
  if (configuration.examples) args.push('--examples', join(dir, 'examples.jsonl'));
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', runner, '--', ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) {
    console.error(`eval-table: ${configuration.label} failed (exit ${result.status}):\n${result.stderr}`);
    process.exit(1);
  }
  if (result.stderr.trim()) console.error(result.stderr.trim());
  rows.push({ ...configuration, report: JSON.parse(result.stdout), seconds });
}

const f = (value) => value.toFixed(3);
console.log('| set | n | R@1 | R@3 | R@5 | R@10 | nDCG@10 | Comp@5 | Comp@10 | MRR | p50 ms | p95 ms | p99 ms | eval run s |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const { label, report, seconds } of rows) {
  console.log(
    `| ${label} | ${report.n} | ${f(report['recall@1'])} | ${f(report['recall@3'])} | ${f(report['recall@5'])} | ${f(report['recall@10'])} | ${f(report['ndcg@10'])} | ${f(report['comp@5'])} | ${f(report['comp@10'])} | ${f(report.mrr)} | ${report.latency_ms.p50.toFixed(2)} | ${report.latency_ms.p95.toFixed(2)} | ${report.latency_ms.p99.toFixed(2)} | ${seconds.toFixed(1)} |`,
  );
}
