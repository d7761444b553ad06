/**
 * `quiver eval` through the CLI framework (the retrieval module tests the evaluation itself).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../helpers/cli.ts';

const jsonl = (rows: unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';

describe('quiver eval (CLI)', () => {
  let dir: string;
  let tools: string;
  let queries: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quiver-eval-cli-'));
    tools = join(dir, 'tools.jsonl');
    queries = join(dir, 'queries.jsonl');
    writeFileSync(
      tools,
      jsonl([
        { id: 'weather', name: 'getWeatherForecast', description: 'Weather forecast for a city' },
        { id: 'stocks', name: 'getStockPrice', description: 'Current price of a stock' },
        { id: 'pdf', name: 'pdfToText', description: 'Extract plain text from a PDF document' },
      ]),
    );
    writeFileSync(
      queries,
      jsonl([
        { id: 'q1', query: 'weather forecast for Paris', gold: ['weather'] },
        { id: 'q2', query: 'price of AAPL stock. Then convert my PDF to text.', gold: ['stocks', 'pdf'] },
        { id: 'q3', query: 'something', gold: ['ghost-tool'] },
      ]),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs as `quiver eval`, prints the contract JSON, and exits 2 on bad usage', async () => {
    const result = await runInProcess(['eval', '--tools', tools, '--queries', queries, '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { n: number }).n, 2);
    assert.equal((await runInProcess(['eval', '--queries', queries])).code, 2);
    assert.equal((await runInProcess(['eval', 'extra', '--tools', tools, '--queries', queries])).code, 2);
  });
});
