/**
 * `quiver pid …` out of process (issue #14): the real binary generates a document from a
 * folder of TypeScript MCP server code (zod shapes and JSDoc reach it), enriches it through a
 * local OpenAI-wire fake with the LLM settings from the environment (a second run, same data
 * folder, makes no call), and answers bad input with the documented exit codes and a one-line
 * JSON error on stderr. (Each binary run opens a fresh store; the data folder keeps the cache.)
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runBinary, runInProcess } from '../helpers/cli.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../helpers/fake-openai-chat.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { fixtureFolder } from './helpers.ts';

describe('quiver pid (binary)', () => {
  let root: string;
  let folder: string;
  let fake: FakeOpenAIChat;
  let env: Record<string, string>;

  before(async () => {
    root = await openTempDir('pid-cli');
    folder = await fixtureFolder(root, 'notes');
    fake = await startFakeOpenAIChat('valid');
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_LLM_BASE_URL: fake.baseUrl, QUIVER_LLM_MODEL: 'fake-model', QUIVER_LLM_PRICE_INPUT: '1', QUIVER_LLM_PRICE_OUTPUT: '4' };
  });
  after(async () => {
    await fake.close();
    await rm(root, { recursive: true, force: true });
  });

  it('generates from a folder (zod constraints, JSDoc, provenance) and enriches through the configured endpoint once, then from the cache', async () => {
    const first = await runBinary(['pid', 'generate', folder, '--from', 'zod,ts,llm', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const report = JSON.parse(first.stdout) as { toolCount: number; stored: boolean; llmUsage: { calls: number; costUsd: number }; document: { tools: Array<Record<string, any>> }; provenance: Record<string, string> };
    assert.equal(report.toolCount, 3);
    assert.equal(report.stored, false);
    const search = report.document.tools.find((tool) => tool['name'] === 'search_notes')!;
    assert.equal(search['inputSchema'].properties.query.maxLength, 200);
    assert.equal(report.provenance['tools.search_notes.inputSchema'], 'zod');
    assert.equal(report.provenance['tools.search_notes.llmNotes'], 'ts');
    assert.equal(search['exampleRequests'].length, 12);
    const usage = report.llmUsage;
    assert.equal(usage.calls, 3);
    assert.equal(usage.costUsd, (360 * 1 + 240 * 4) / 1_000_000);
    const requests = fake.requests.length;
    const second = await runBinary(['pid', 'generate', folder, '--from', 'zod,ts,llm'], env);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /LLM: 0 call\(s\), 3 cached/);
    assert.equal(fake.requests.length, requests);
  });

  it('answers an unknown source with exit 2 and a one-line JSON error, before opening the store', async () => {
    const unknown = await runInProcess(['pid', 'generate', folder, '--from', 'yaml', '--json'], env);
    assert.equal(unknown.code, 2);
    assert.match((JSON.parse(unknown.stderr.trim()) as { error: { message: string } }).error.message, /unknown source yaml/);
  });
});
