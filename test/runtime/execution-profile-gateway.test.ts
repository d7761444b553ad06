/**
 * Issue #11 end to end through the gateway: a plugin installed with the real `quiver plugin add`
 * whose intelligence document says "200 ms timeout, breaker opens after 2 failures", called by a
 * real MCP SDK client through `quiver serve --stdio` (the gateway's cached launch spec): the
 * slow tool fails at ~200 ms, and after two failures the next call is refused by the breaker.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { createProfilePlugin } from './execution-profile-fixture.ts';

/** The text of a tool call's outcome, whether the gateway answers with isError or a JSON-RPC error. */
async function outcomeOf(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ failed: boolean; text: string; elapsedMs: number }> {
  const startedAt = performance.now();
  try {
    const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult;
    const text = result.content.map((item) => (item.type === 'text' ? item.text : '')).join(' ');
    return { failed: result.isError === true, text, elapsedMs: performance.now() - startedAt };
  } catch (error) {
    return { failed: true, text: (error as Error).message, elapsedMs: performance.now() - startedAt };
  }
}

describe('execution profile through quiver serve (issue #11)', { timeout: 180_000 }, () => {
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-profile-gw-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data'), QUIVER_LOG_LEVEL: 'silent' };
    const folder = await createProfilePlugin(join(home, 'sources'), 'slowpoke', {
      execution: { timeoutRecommendation: 200, circuitBreakerConfig: { failureThreshold: 2, timeout: 60_000 } },
    });
    const added = await runBinary(['plugin', 'add', folder, '--name', 'slowpoke'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('times out at 200 ms and opens the breaker after 2 failures', async () => {
    const client = new Client({ name: 'execution-profile', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }),
    );
    try {
      const warm = await outcomeOf(client, 'slowpoke__echo', { text: 'warm' });
      assert.deepEqual([warm.failed, warm.text], [false, 'warm']);

      const first = await outcomeOf(client, 'slowpoke__slow', { ms: 5_000 });
      assert.equal(first.failed, true);
      assert.match(first.text, /time/i, first.text);
      assert.ok(first.elapsedMs < 2_000, `the gateway answered after ${Math.round(first.elapsedMs)} ms; the PID says 200 ms, the default is 30 s`);

      const second = await outcomeOf(client, 'slowpoke__slow', { ms: 5_000 });
      assert.equal(second.failed, true);
      const refused = await outcomeOf(client, 'slowpoke__count');
      assert.equal(refused.failed, true);
      assert.match(refused.text, /circuit/i, refused.text);
    } finally {
      await client.close();
    }
  });
});
