/**
 * `quiver eval` measures what runs (issue #25): by default the configured embedder
 * (QUIVER_EMBEDDER), or the one `--embedder` names (table, model, offline, none, openai:URL), for
 * plain eval and `--replay`; the report names the embedder it used.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'quiver-eval-embedder-'));
const tools = join(dir, 'tools.jsonl');
const queries = join(dir, 'queries.jsonl');
const jsonl = (rows: object[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
writeFileSync(
  tools,
  jsonl([
    { id: 'weather', name: 'getWeather', description: 'Weather forecast for a city' },
    { id: 'mail', name: 'sendEmail', description: 'Send an email message to a recipient' },
    { id: 'pdf', name: 'pdfToText', description: 'Extract the text of a PDF file' },
  ]),
);
writeFileSync(
  queries,
  jsonl([
    { id: 'q1', query: 'will it rain in Paris tomorrow', gold: ['weather'] },
    { id: 'q2', query: 'write to my boss', gold: ['mail'] },
    { id: 'q3', query: 'turn this pdf into text', gold: ['pdf'] },
  ]),
);

describe('quiver eval --embedder', () => {
  let server: Server;
  let url: string;
  let embeddingRequests = 0;
  before(async () => {
    // An OpenAI-compatible /embeddings endpoint on loopback: a 4-d vector from the text's letters.
    server = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk) => (raw += chunk));
      request.on('end', () => {
        embeddingRequests++;
        const body = JSON.parse(raw) as { input: string[]; model: string };
        const data = body.input.map((text, index) => ({ index, embedding: [text.length % 7, (text.match(/e/g) ?? []).length, 1, 2] }));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ data, model: body.model }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const evalWith = async (args: string[], env: Record<string, string> = {}) => {
    const result = await runInProcess(['eval', '--tools', tools, '--queries', queries, '--json', ...args], { QUIVER_EMBEDDER: 'offline', ...env });
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { embedder: string; 'recall@1': number };
  };

  it('uses the configured embedder by default', async () => {
    assert.match((await evalWith([])).embedder, /^quiver-offline/);
    assert.match((await evalWith([], { QUIVER_EMBEDDER: 'table' })).embedder, /^use-lite-table:/);
    assert.match((await evalWith([], { QUIVER_EMBEDDER: 'model' })).embedder, /^use-lite:/);
  });

  it('uses the one --embedder names: table, offline, none, model, openai:URL', { timeout: 120_000 }, async () => {
    assert.match((await evalWith(['--embedder', 'table'])).embedder, /^use-lite-table:/);
    assert.match((await evalWith(['--embedder', 'offline'])).embedder, /^quiver-offline/);
    assert.equal((await evalWith(['--embedder', 'none'])).embedder, 'none (lexical only)');
    const model = await evalWith(['--embedder', 'model']);
    assert.match(model.embedder, /^use-lite:/);
    const before = embeddingRequests;
    assert.match((await evalWith(['--embedder', `openai:${url}`], { QUIVER_EMBEDDER_MODEL: 'test-embed' })).embedder, /^openai-compatible:127\.0\.0\.1:\d+\/test-embed/);
    assert.ok(embeddingRequests > before, 'the endpoint was asked');
  });

  it('says which embedder a fallen-back model or table used', async () => {
    const report = await evalWith([], { QUIVER_EMBEDDER: 'model', QUIVER_EMBEDDER_MODEL_PATH: join(dir, 'missing') });
    // The configured model path is for the app; plain eval with the configured kind uses it too.
    assert.match(report.embedder, /^quiver-offline.*fallback: use-lite:/);
    const table = await evalWith([], { QUIVER_EMBEDDER: 'table', QUIVER_EMBEDDER_MODEL_PATH: join(dir, 'missing.qtt') });
    assert.match(table.embedder, /^quiver-offline.*fallback: use-lite-table:/);
  });

  it('refuses an unknown embedder with exit 2', async () => {
    const result = await runInProcess(['eval', '--tools', tools, '--queries', queries, '--embedder', 'bert'], { QUIVER_EMBEDDER: 'offline' });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--embedder must be one of/);
  });

  it('--replay uses and names the embedder too', { timeout: 120_000 }, async () => {
    const result = await runInProcess(['eval', '--replay', '--tools', tools, '--queries', queries, '--window', '3', '--embedder', 'offline', '--json'], { QUIVER_EMBEDDER: 'model' });
    assert.equal(result.code, 0, result.stderr);
    assert.match((JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { embedder: string }).embedder, /^quiver-offline/);
    const table = await runInProcess(['eval', '--replay', '--tools', tools, '--queries', queries, '--window', '3', '--embedder', 'table', '--json'], { QUIVER_EMBEDDER: 'offline' });
    assert.equal(table.code, 0, table.stderr);
    assert.match((JSON.parse(table.stdout.trim().split('\n').at(-1)!) as { embedder: string }).embedder, /^use-lite-table:/);
  });
});
