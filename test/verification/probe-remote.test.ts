/**
 * The probe of a remote plugin (issue #10): a real Streamable HTTP MCP server on loopback (the
 * SDK's McpServer, stateless), exercised over HTTP with the same rule as a sandboxed one. The
 * compatibility stage judges it; the sandbox-execution stage cannot observe it and says so.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startStatelessMcpServer, type StatelessMcpServer } from '../helpers/stateless-mcp-server.ts';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '../../src/core/logger.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { createProbeRunner } from '../../src/verification/stages/probe/index.ts';
import { createSandboxExecutionStage } from '../../src/verification/stages/sandbox-execution/index.ts';
import { createCompatibilityStage } from '../../src/verification/stages/compatibility/index.ts';
import type { StageContext, VerificationSubject } from '../../src/verification/types.ts';

const TOKEN = 'probe-remote-token';

/** A stateless Streamable HTTP MCP server behind a bearer token; counts calls per tool. */
async function startRemote(): Promise<StatelessMcpServer & { calls: Map<string, number> }> {
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const server = await startStatelessMcpServer({
    name: 'remote-fixture',
    version: '1.0.0',
    token: TOKEN,
    register(mcp) {
      mcp.registerTool('get_forecast', { description: 'Forecast for a city.', inputSchema: { city: z.string() }, annotations: { readOnlyHint: true } }, async ({ city }) => {
        count('get_forecast');
        return { content: [{ type: 'text', text: `${city}: sunny` }] };
      });
      mcp.registerTool('delete_city', { description: 'Deletes a city.', inputSchema: { city: z.string() }, annotations: { destructiveHint: true } }, async () => {
        count('delete_city');
        return { content: [{ type: 'text', text: 'deleted' }] };
      });
    },
  });
  return { ...server, calls };
}

function subjectFor(url: string, token: string): VerificationSubject {
  return {
    pluginId: 'remote-fixture',
    pluginName: 'remote-fixture',
    version: '1.0.0',
    sourceType: 'url',
    source: { url },
    codeDir: null,
    manifest: null,
    intelligence: null,
    tools: [],
    otherToolNames: [],
    launch: { transport: 'http', pluginId: 'remote-fixture', pluginName: 'remote-fixture', version: '1.0.0', trustLevel: 'UNVERIFIED', url, headers: { authorization: `Bearer ${token}` } },
  };
}

function contextFor(subject: VerificationSubject): StageContext {
  return { subject, settings: { registryUrl: '', licenseAllowList: [], stageTimeoutMs: 30_000 }, logger: silentLogger, signal: new AbortController().signal, progress: () => undefined };
}

describe('verification probe of a remote plugin', () => {
  let remote: Awaited<ReturnType<typeof startRemote>>;
  const host = detectHost({ bubblewrapPath: null, useCgroups: false, codeOverlay: false });
  before(async () => {
    remote = await startRemote();
  });
  after(async () => {
    await remote.close();
  });

  it('checks the contract over HTTP and calls only the safe tool; the sandbox stage cannot vouch for it', { timeout: 30_000 }, async () => {
    const runner = createProbeRunner({ host });
    const context = contextFor(subjectFor(remote.url, TOKEN));
    const compat = await createCompatibilityStage(runner)(context);
    const sandbox = await createSandboxExecutionStage(runner)(context);
    const probe = await runner.probe(context);
    assert.equal(probe.remote, true);
    assert.equal(probe.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.deepEqual(probe.listing.tools.map((tool) => tool.name).sort(), ['delete_city', 'get_forecast']);
    assert.equal(remote.calls.get('get_forecast'), 1, 'one read with generated arguments');
    assert.equal(remote.calls.get('delete_city'), undefined, 'the destructive tool is never called');
    assert.ok(probe.calls.filter((call) => call.kind !== 'valid').every((call) => call.outcome === 'tool-error' || call.outcome === 'protocol-error'));
    assert.equal(compat.score, 100, JSON.stringify(compat.issues));
    assert.equal(sandbox.score, 0);
    assert.deepEqual(sandbox.issues.map((issue) => issue.code), ['sandbox_remote']);
  });

  it('scores 0 on compatibility when the remote plugin refuses the handshake, without echoing the credential', { timeout: 30_000 }, async () => {
    const runner = createProbeRunner({ host });
    const context = contextFor(subjectFor(remote.url, 'wrong-secret-value'));
    const compat = await createCompatibilityStage(runner)(context);
    assert.equal(compat.score, 0);
    assert.deepEqual(compat.issues.map((issue) => issue.code), ['compat_handshake_failed']);
    assert.doesNotMatch(JSON.stringify(compat), /wrong-secret-value/);
  });
});
