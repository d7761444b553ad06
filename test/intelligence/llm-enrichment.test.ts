/**
 * LLM enrichment of generated documents (issue #14) against a local server speaking the
 * OpenAI chat completions wire format (test/helpers/fake-openai-chat.ts): a valid reply is
 * accepted and its example requests reach the catalog's example field; the same inputs a
 * second time make no call (the reply cache); invalid output is sent back and retried, then
 * rejected with a clear error; a timeout or a 5xx fails the generation and leaves the previous
 * document in place. Cost is reported from the `usage` tokens and the configured prices.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../helpers/fake-openai-chat.ts';
import type { Database } from '../../src/store/database.ts';
import { createGenerationHarness, fixtureRepo, serviceWithLlm, type GenerationHarness } from './helpers.ts';

type Tool = Record<string, any>;
const toolOf = (document: Record<string, unknown>, name: string): Tool => (document['tools'] as Tool[]).find((tool) => tool['name'] === name)!;
const FROM = ['mcp,zod,ts,llm'];

describeEachBackend('LLM enrichment of generated documents', (backend) => {
  let db: Database;
  let harness: GenerationHarness;
  let fake: FakeOpenAIChat;

  before(async () => {
    db = await backend.open();
    fake = await startFakeOpenAIChat('valid');
    harness = await createGenerationHarness(db);
    await harness.plugins.add((await fixtureRepo(harness.root)).remote, { name: 'notes' });
  });
  after(async () => {
    await harness.close();
    await fake.close();
    await rm(harness.root, { recursive: true, force: true });
    await db.close();
  });

  it('accepts valid output, reports its cost and puts the example requests into the catalog', async () => {
    const pids = serviceWithLlm(db, harness, { baseUrl: fake.baseUrl, model: 'model-a', prices: { inputPerMillion: 2, outputPerMillion: 8 } });
    const report = await pids.generate('notes', { from: FROM });
    assert.equal(fake.requests.length, 3, 'one call per tool');
    assert.deepEqual(report.llmUsage, { calls: 3, cacheHits: 0, promptTokens: 360, completionTokens: 240, costUsd: (360 * 2 + 240 * 8) / 1_000_000 });
    const search = toolOf(report.document, 'search_notes');
    assert.equal(search.exampleRequests.length, 12);
    assert.equal(report.provenance['tools.search_notes.exampleRequests'], 'llm');
    // The author's, discovery's and the code's words outrank the model's: llmNotes came from JSDoc.
    assert.equal(report.provenance['tools.search_notes.llmNotes'], 'ts');
    assert.equal(report.provenance['semantic.antiPatterns'], 'llm');
    // The model saw the tool as the other sources described it.
    const sent = fake.requests.map((request) => JSON.parse(request.messages[1]!.content) as { tool: Tool }).find((body) => body.tool.name === 'search_notes')!;
    assert.equal(sent.tool.inputSchema.properties.query.minLength, 2);
    // Retrieval's example field: the catalog tool now carries the generated requests.
    const catalogTool = (await harness.plugins.tools('notes')).find((tool) => tool.name === 'search_notes')!;
    assert.deepEqual(catalogTool.exampleQueries, search.exampleRequests);
    assert.equal(report.updatedTools, 3);
  });

  it('makes no second call for the same inputs', async () => {
    const pids = serviceWithLlm(db, harness, { baseUrl: fake.baseUrl, model: 'model-a' });
    const before = fake.requests.length;
    const report = await pids.generate('notes', { from: FROM });
    assert.equal(fake.requests.length, before);
    assert.equal(report.llmUsage?.calls, 0);
    assert.equal(report.llmUsage?.cacheHits, 3);
    assert.equal(report.updatedTools, 0, 'the same requests are not written twice');
    assert.ok(report.reused.includes('llm'));
  });

  it('retries invalid output with the errors and accepts a corrected reply', async () => {
    fake.mode = 'invalid-once';
    const pids = serviceWithLlm(db, harness, { baseUrl: fake.baseUrl, model: 'model-b' });
    const before = fake.requests.length;
    const report = await pids.generate('notes', { from: FROM });
    assert.equal(fake.requests.length - before, 4, 'three tools, one of them asked twice');
    assert.equal(report.llmUsage?.calls, 4);
    const retry = fake.requests[before + 1]!.messages;
    assert.equal(retry.length, 4);
    assert.match(retry[3]!.content, /That reply is invalid: the reply is not a JSON object/);
  });

  const unchangedAfter = async (mode: FakeOpenAIChat['mode'], model: string, timeoutMs: number, expected: RegExp) => {
    const stored = await harness.pids.get('notes');
    fake.mode = mode;
    const pids = serviceWithLlm(db, harness, { baseUrl: fake.baseUrl, model, timeoutMs });
    await assert.rejects(pids.generate('notes', { from: FROM }), expected);
    const after = await harness.pids.get('notes');
    assert.equal(after.contentHash, stored.contentHash);
    assert.equal(after.generatedAt.getTime(), stored.generatedAt.getTime());
    assert.deepEqual(after.document, stored.document);
  };

  it('rejects output that stays invalid after the retries, keeping the previous document', async () => {
    const before = fake.requests.length;
    await unchangedAfter('invalid', 'model-c', 5_000, /LLM enrichment of tool '\w+' gave invalid output 3 times: .*exampleRequests/);
    assert.equal(fake.requests.length - before, 3);
  });

  it('keeps the previous document when the endpoint answers 5xx (after one retry)', async () => {
    const before = fake.requests.length;
    await unchangedAfter('error-500', 'model-d', 5_000, /the LLM endpoint answered 500: the model is overloaded/);
    assert.equal(fake.requests.length - before, 2);
  });

  it('keeps the previous document when the endpoint does not answer in time', async () => {
    await unchangedAfter('hang', 'model-e', 1_000, /did not answer within 1000 ms/);
  });
});
