/**
 * The PID generation bench sections on a small scale, so they cannot rot: generation time per
 * tool is measured over a synthetic server whose every tool is generated, and the eval with and
 * without generated example requests runs end to end against the local OpenAI-wire fake,
 * writing the examples file `quiver eval --examples` reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchPidEval, benchPidGeneration } from './pid-generation.ts';
import { createChatClient } from '../../intelligence/llm/client.ts';
import { startFakeOpenAIChat } from '../../../test/helpers/fake-openai-chat.ts';

describe('PID generation bench', () => {
  it('measures generation time per tool over a synthetic TypeScript server', async () => {
    const result = await benchPidGeneration({ tools: 5, runs: 1 });
    assert.equal(result.tools, 5);
    assert.ok(result.medianMs > 0 && result.perToolMs > 0);
  });

  it('evaluates retrieval with and without generated example requests', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'quiver-pid-eval-'));
    const fake = await startFakeOpenAIChat('valid');
    try {
      const tools = join(folder, 'tools.jsonl');
      const queries = join(folder, 'queries.jsonl');
      await writeFile(tools, ['{"id": "weather lookup", "name": "weather", "description": "Current weather for a city"}', '{"id": "flights", "name": "flights", "description": "Search flights between airports"}'].join('\n'));
      await writeFile(queries, '{"id": "q1", "query": "is it raining in Paris", "gold": ["weather lookup"]}\n');
      const examplesOut = join(folder, 'examples.jsonl');
      const result = await benchPidEval({ client: createChatClient({ baseUrl: fake.baseUrl, model: 'fake' }), tools, queries, examplesOut });
      assert.equal(result['tools'], 2);
      assert.equal(result['exampleRequests'], 24);
      assert.equal((result['without'] as { n: number }).n, 1);
      const lines = (await readFile(examplesOut, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { tool_id: string });
      assert.deepEqual([...new Set(lines.map((line) => line.tool_id))].sort(), ['flights', 'weather lookup'], 'examples carry the eval ids, not the MCP-safe names');
    } finally {
      await fake.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
