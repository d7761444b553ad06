/**
 * Issue #24: the verification probe meets a plugin in the era it speaks, as the runtime does. A
 * plugin on the v2 SDK that speaks only 2026-07-28 (test/fixtures/modern-plugin: `initialize`
 * answered with -32022) and its 2025-11-25 twin on SDK 1.x (test/fixtures/legacy-twin-plugin:
 * the same tools, schemas and annotations) are both started in the real sandbox and probed: the
 * same tools are listed and called, bad arguments get the same clean errors, and both stages
 * judge them alike (before, the modern plugin scored 0 on both: "MCP error -32022: Unsupported
 * protocol version: 2025-11-25"). Then through the app on both backends: both installed from
 * folders and verified by `quiver plugin verify`, the stored reports pass the same stages with
 * the same scores. Needs bubblewrap, cgroups and the code overlay: without them the suites skip,
 * under CI they fail.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/core/logger.ts';
import { detectHost, type HostCapabilities } from '../../src/runtime/host-detection.ts';
import { createProbeRunner } from '../../src/verification/stages/probe/index.ts';
import type { ProbeResult } from '../../src/verification/stages/probe/types.ts';
import { createSandboxExecutionStage } from '../../src/verification/stages/sandbox-execution/index.ts';
import { createCompatibilityStage } from '../../src/verification/stages/compatibility/index.ts';
import type { StageContext, StageResult, VerificationSubject } from '../../src/verification/types.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import type { VerificationReport } from '../../src/verification/report.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { skipUnless } from '../helpers/requirements.ts';
import { legacyTwinPluginFolder, modernPluginFolder } from '../helpers/sdk-plugin-folders.ts';
import { repositoryRoot } from '../runtime/helpers.ts';

const host: HostCapabilities = detectHost();
const missing = host.bubblewrapProblem ?? (host.cgroups.kind === 'none' ? `cgroups are unusable: ${host.cgroups.reason}` : undefined) ?? (host.overlay ? undefined : `the code overlay is unusable: ${host.overlayProblem}`);

function subjectOf(name: string, folder: string): VerificationSubject {
  const launch = {
    transport: 'stdio' as const,
    pluginId: name,
    pluginName: name,
    version: '1.0.0',
    trustLevel: 'OFFICIAL' as const,
    command: process.execPath,
    args: ['server.mjs'],
    cwd: folder,
    codeDir: folder,
    readOnlyPaths: [folder],
  };
  return { pluginId: name, pluginName: name, version: '1.0.0', sourceType: 'path', source: { path: folder }, codeDir: folder, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch };
}

async function verify(subject: VerificationSubject): Promise<{ sandbox: StageResult; compat: StageResult; probe: ProbeResult }> {
  const runner = createProbeRunner({ host });
  const context: StageContext = { subject, settings: { registryUrl: 'https://registry.npmjs.org', licenseAllowList: [], stageTimeoutMs: 60_000 }, logger: silentLogger, signal: new AbortController().signal, progress: () => undefined };
  const [sandbox, compat] = await Promise.all([createSandboxExecutionStage(runner)(context), createCompatibilityStage(runner)(context)]);
  return { sandbox, compat, probe: await runner.probe(context) };
}

const codes = (result: StageResult): string[] => result.issues.map((issue) => issue.code).sort();
/** Tool → the outcomes of its calls of one kind, sorted (what the probe did with each tool). */
function outcomes(probe: ProbeResult, kinds: readonly string[]): Record<string, string[]> {
  const byTool: Record<string, string[]> = {};
  for (const call of probe.calls.filter((candidate) => kinds.includes(candidate.kind))) (byTool[call.tool] ??= []).push(call.outcome);
  for (const list of Object.values(byTool)) list.sort();
  return byTool;
}

describe('the verification probe speaks both protocol eras (issue #24)', { skip: skipUnless(missing) }, () => {
  let root: string;
  let modern: { sandbox: StageResult; compat: StageResult; probe: ProbeResult };
  let legacy: { sandbox: StageResult; compat: StageResult; probe: ProbeResult };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-eras-test-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folders
    // One at a time: two sandboxed starts at once on a loaded 2-core machine only add noise.
    modern = await verify(subjectOf('modern', modernPluginFolder(join(root, 'modern'))));
    legacy = await verify(subjectOf('legacy-twin', legacyTwinPluginFolder(join(root, 'legacy-twin'))));
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('starts the 2026-07-28-only plugin and negotiates 2026-07-28, its twin 2025-11-25', { timeout: 120_000 }, () => {
    assert.equal(modern.probe.started, true, modern.probe.startError);
    assert.equal(modern.probe.protocolVersion, '2026-07-28');
    assert.deepEqual(modern.probe.serverInfo, { name: 'modern-plugin', version: '1.0.0' });
    assert.equal(legacy.probe.started, true, legacy.probe.startError);
    assert.equal(legacy.probe.protocolVersion, '2025-11-25');
    assert.equal(modern.probe.starts, 1);
  });

  it('lists and calls the same tools of both, with the same outcomes', { timeout: 120_000 }, () => {
    const names = (probe: ProbeResult): string[] => probe.listing.tools.map((tool) => tool.name).sort();
    assert.deepEqual(names(modern.probe), ['draft_note', 'place_order', 'reverse_words']);
    assert.deepEqual(names(legacy.probe), names(modern.probe));
    // The read is called with generated arguments and answers; the others are exercised in the throwaway sandbox.
    assert.deepEqual(outcomes(modern.probe, ['valid']), { reverse_words: ['result'] }, JSON.stringify(modern.probe.calls));
    assert.deepEqual(outcomes(modern.probe, ['valid']), outcomes(legacy.probe, ['valid']));
    assert.deepEqual(Object.keys(outcomes(modern.probe, ['exercise'])).sort(), ['draft_note', 'place_order'], JSON.stringify(modern.probe.calls));
    assert.deepEqual(Object.keys(outcomes(legacy.probe, ['exercise'])).sort(), ['draft_note', 'place_order']);
    // Bad arguments: refused cleanly by both SDKs, never a crash or a hang.
    const bad = (probe: ProbeResult) => outcomes(probe, ['missing-required', 'wrong-type']);
    assert.ok(Object.keys(bad(modern.probe)).length > 0, 'bad-argument calls were made');
    assert.deepEqual(bad(modern.probe), bad(legacy.probe), JSON.stringify(modern.probe.calls));
    assert.equal(modern.probe.crashes.length, 0);
  });

  it('passes the same stages with the same issues for both eras', { timeout: 120_000 }, () => {
    assert.deepEqual(codes(modern.sandbox), codes(legacy.sandbox), JSON.stringify(modern.sandbox.issues));
    assert.deepEqual(codes(modern.compat), codes(legacy.compat), JSON.stringify(modern.compat.issues));
    assert.ok(!codes(modern.compat).includes('compat_older_protocol'), 'speaking 2026-07-28 is not an older protocol');
    assert.ok(modern.sandbox.score >= 80, `sandbox ${modern.sandbox.score}: ${JSON.stringify(modern.sandbox.issues)}`);
    assert.ok(modern.compat.score >= 90, `compat ${modern.compat.score}: ${JSON.stringify(modern.compat.issues)}`);
    assert.equal(modern.compat.score, legacy.compat.score, JSON.stringify({ modern: modern.compat.issues, legacy: legacy.compat.issues }));
    console.log(`modern: sandbox ${modern.sandbox.score}, compat ${modern.compat.score}; 2025 twin: sandbox ${legacy.sandbox.score}, compat ${legacy.compat.score}`);
  });
});

describeEachBackend('stored verification reports of a 2026-07-28 plugin and its 2025 twin (issue #24)', (backend) => {
  let root: string;
  let app: App;

  async function verifyByCli(name: string): Promise<VerificationReport> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['plugin', 'verify', name, '--json'], commands, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, {}, { app, cwd: root });
    assert.equal(code, 0, stderr);
    return JSON.parse(stdout) as VerificationReport;
  }

  before(async () => {
    skipUnless(missing); // under CI a machine without the sandbox fails here
    root = mkdtempSync(join(tmpdir(), 'quiver-eras-test-app-'));
    chmodSync(root, 0o755);
    app = await createApp(
      loadConfig({
        QUIVER_HOME: join(root, 'home'),
        QUIVER_DATABASE_URL: 'memory://',
        QUIVER_LOG_LEVEL: 'silent',
        // No registry is needed for a folder plugin; a closed port keeps the run offline.
        QUIVER_VERIFY_REGISTRY_URL: 'http://127.0.0.1:9',
        QUIVER_VERIFY_STAGE_TIMEOUT_MS: '60000',
      }),
      { db: await backend.open() },
    );
  });
  after(async () => {
    await app?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('both are installed, verified and scored alike: their tools probed, no stage failed for the era', { skip: skipUnless(missing), timeout: 240_000 }, async () => {
    await app.plugins.add(modernPluginFolder(join(root, 'modern')), { name: 'modern' });
    await app.plugins.add(legacyTwinPluginFolder(join(root, 'twin')), { name: 'twin' });
    const modern = await verifyByCli('modern');
    const twin = await verifyByCli('twin');
    const stored = await app.verification.latestReport('modern');
    assert.equal(stored?.jobId, modern.jobId, 'the report is stored');
    for (const stage of ['sandboxExecution', 'compatibility'] as const) {
      const ours = modern.stages[stage];
      assert.equal(ours.status, 'passed', `${stage}: ${JSON.stringify(ours)}`);
      assert.equal(ours.metrics?.['toolsListed'], 3, `${stage}: ${JSON.stringify(ours.metrics)}`);
      assert.equal(ours.score, twin.stages[stage].score, `${stage}: ${JSON.stringify({ modern: ours.issues, twin: twin.stages[stage].issues })}`);
      assert.ok(!ours.issues.some((issue) => /start_failed|handshake_failed|older_protocol/.test(issue.code)), JSON.stringify(ours.issues));
    }
    assert.equal(modern.stages.sandboxExecution.metrics?.['toolsCalled'], 3, JSON.stringify(modern.stages.sandboxExecution.metrics));
    assert.equal(modern.stages.compatibility.metrics?.['protocolVersion'], '2026-07-28');
    assert.equal(twin.stages.compatibility.metrics?.['protocolVersion'], '2025-11-25');
    const { plugin } = await app.plugins.show('modern');
    assert.equal(plugin.trustScore, modern.overallScore);
  });
});

describe('the verification probe of a remote 2026-07-28 plugin (issue #24)', () => {
  it('negotiates 2026-07-28 over HTTP, keeps the server identity, calls the read and scores compatibility like a 2025 one', { timeout: 60_000 }, async () => {
    const { createServer } = (await import(pathToFileURL(join(repositoryRoot, 'test/fixtures/modern-plugin/server.mjs')).href)) as { createServer: () => never };
    const handler = createMcpHandler(createServer, { legacy: 'reject' });
    const server = createHttpServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        void handler.fetch(new Request(`http://127.0.0.1${incoming.url}`, { method: incoming.method, headers, ...(body && incoming.method !== 'GET' ? { body } : {}) })).then(async (response) => {
          response.headers.forEach((value, name) => outgoing.setHeader(name, value));
          outgoing.writeHead(response.status);
          const reader = response.body?.getReader();
          for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) outgoing.write(read.value);
          outgoing.end();
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    try {
      const subject: VerificationSubject = {
        ...subjectOf('modern-http', '/nonexistent'),
        sourceType: 'url',
        source: { url },
        codeDir: null,
        launch: { transport: 'http', pluginId: 'modern-http', pluginName: 'modern-http', version: '1.0.0', trustLevel: 'UNVERIFIED', url, headers: {} },
      };
      const remoteHost = detectHost({ bubblewrapPath: null, useCgroups: false, codeOverlay: false });
      const runner = createProbeRunner({ host: remoteHost });
      const context: StageContext = { subject, settings: { registryUrl: '', licenseAllowList: [], stageTimeoutMs: 30_000 }, logger: silentLogger, signal: new AbortController().signal, progress: () => undefined };
      const compat = await createCompatibilityStage(runner)(context);
      const probe = await runner.probe(context);
      assert.equal(probe.started, true, probe.startError);
      assert.equal(probe.remote, true);
      assert.equal(probe.protocolVersion, '2026-07-28');
      assert.deepEqual(probe.serverInfo, { name: 'modern-plugin', version: '1.0.0' });
      assert.deepEqual(outcomes(probe, ['valid']), { reverse_words: ['result'] }, JSON.stringify(probe.calls));
      assert.equal(compat.score, 100, JSON.stringify(compat.issues));
    } finally {
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** A 2025 plugin that exits on anything before `initialize` (some legacy servers do): here, the `server/discover` probe. */
const EXITS_ON_DISCOVER = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/v4';
const server = new McpServer({ name: 'strict-legacy', version: '1.0.0' });
server.registerTool('echo_text', { description: 'Echo a text back', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
const transport = new StdioServerTransport();
await server.connect(transport);
const handle = transport.onmessage;
transport.onmessage = (message) => {
  if (message.method === 'server/discover') process.exit(3);
  handle?.(message);
};
`;

describe('the verification probe of a legacy plugin that exits on the era probe (issue #24)', { skip: skipUnless(missing) }, () => {
  it('starts it again in the 2025 era and probes it as before', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-eras-test-strict-'));
    chmodSync(root, 0o755);
    try {
      const folder = legacyTwinPluginFolder(join(root, 'strict'));
      writeFileSync(join(folder, 'server.mjs'), EXITS_ON_DISCOVER);
      const { compat, probe } = await verify(subjectOf('strict-legacy', folder));
      assert.equal(probe.started, true, probe.startError);
      assert.equal(probe.protocolVersion, '2025-11-25');
      assert.equal(probe.starts, 1, 'the spent start is not counted as a crash restart');
      assert.equal(probe.crashes.length, 0);
      assert.deepEqual(outcomes(probe, ['valid']), { echo_text: ['result'] }, JSON.stringify(probe.calls));
      assert.equal(compat.score, 100, JSON.stringify(compat.issues));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
