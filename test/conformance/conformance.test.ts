/**
 * Issues #12 and #24: the MCP conformance suite's server scenarios that each protocol revision
 * (2025-11-25 and 2026-07-28) requires, through `quiver serve`, with
 * Quiver's own test plugin behind it, compared with the committed baseline of expected
 * failures. A new failure or an unexpected pass fails this test, and so does a missing
 * Node 22 or suite (the runner fetches both from the npm registry; it never skips).
 * Several minutes once the cache is warm (67 scenarios; the first run downloads Node 22 and the suite).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const runner = fileURLToPath(new URL('../../scripts/conformance.mjs', import.meta.url));
const baseline = fileURLToPath(new URL('./expected-failures.yml', import.meta.url));

describe('MCP conformance suite through quiver serve', () => {
  it('every required server scenario of both revisions passes except the baseline, and every baseline scenario still fails', { timeout: 1_800_000 }, async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [runner, '--baseline', baseline], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.once('close', (exit) => resolve({ code: exit, output }));
    });
    assert.match(output, /^server-initialize\s+pass$/m, output);
    assert.match(output, /^2025-11-25: 30 of 30 pass$/m, output);
    assert.match(output, /^2026-07-28: \d+ of 37 pass$/m, output);
    assert.match(output, /^matches the baseline$/m, output);
    assert.equal(code, 0, output);
  });
});
