/**
 * Issue #23, "isolation is never granted by a number alone", with a dormant plugin (a real
 * dependency-free MCP server, test/trust/dormant-plugin.ts) installed through the real CLI from a
 * local folder and from a local git repository, verified by the real pipeline, and called by a
 * tenant's agent through the real `/mcp` endpoint with an `mcp`-scoped key:
 * - verified, it is at most COMMUNITY, runs as uid 65534 with no capability and reaches none of
 *   /etc/shadow, the hub's key file, its data folder, 127.0.0.1:5432 or the hub's own port;
 * - the folder is the new user's accident: it holds the hub's home (`.quiver`), so its view of
 *   its own folder must mask the home;
 * - an admin grant above COMMUNITY is refused for the folder (not pinned) and recorded for the
 *   git commit; at OFFICIAL, the loosest level, it still runs unprivileged and reads neither the
 *   hub's key nor its data;
 * - the tenant's key cannot change its trust.
 * On both backends (PGlite: the hub's data folder is real and inside the home).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp, type App } from '../../src/app.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { loadConfig } from '../../src/config.ts';
import { loadSecretKey } from '../../src/plugins/secret-box.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { supervisorMarkerName } from '../../src/runtime/sandbox-identity.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { skipUnless } from '../helpers/requirements.ts';
import { triggerNote, writeDormantPlugin, type DormantReport, type DormantTargets } from './dormant-plugin.ts';

const git = promisify(execFile);
const host = detectHost({ useCgroups: false, codeOverlay: false });
const needs = skipUnless(host.bubblewrap === undefined ? (host.bubblewrapProblem ?? 'bubblewrap is unavailable') : !host.isRoot ? 'the uid checks need Quiver to run as root' : false);

type HostProcess = { pid: number; uids: string; capEff: string; cmdline: string };

/** Whether `pid` descends from this test's process (other test files run plugins of their own at the same time). */
function descendsFromUs(pid: number): boolean {
  for (let current = pid, hops = 0; current > 1 && hops < 64; hops++) {
    if (current === process.pid) return true;
    const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
    current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return false;
}

/** The uid, effective uid and CapEff of every process carrying a supervisor marker that this test's hub started, read by the host from /proc. */
function markedProcesses(): HostProcess[] {
  const out: HostProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`).includes(Buffer.from(`${supervisorMarkerName}=`))) continue;
      if (!descendsFromUs(Number(entry))) continue;
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      out.push({
        pid: Number(entry),
        uids: /Uid:\s*(.*)/.exec(status)![1]!.trim(),
        capEff: /CapEff:\s*(\S+)/.exec(status)![1]!,
        cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200),
      });
    } catch {
      // gone, or a kernel thread
    }
  }
  return out;
}

/**
 * The hub's launch step (a shell that puts itself into the plugin's cgroups, then execs the sandbox)
 * runs as root for the instant before its exec; it is the hub's code, not the plugin's. A scan that
 * lands in that instant looks again until every process has gone past it (a launch step that stays is a failure).
 */
async function settledMarkedProcesses(): Promise<HostProcess[]> {
  const launching = (entry: HostProcess): boolean => entry.cmdline.includes(' quiver-launch ');
  let processes = markedProcesses();
  for (let attempt = 0; attempt < 50 && processes.some(launching); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    processes = markedProcesses();
  }
  return processes;
}

describeEachBackend('a dormant plugin never runs as root nor near the hub (issue #23)', (backend) => {
  let root: string;
  let home: string;
  let app: App;
  let server: HttpServer;
  let tenantKey: string;
  let listener: Server;
  let listenerPort: number;
  let targets: DormantTargets;
  let drop: () => Promise<void>;

  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, { QUIVER_LOG_LEVEL: 'silent' }, { app, cwd: root });
    return { code, stdout, stderr };
  }

  /** Calls `<plugin>__save_note` the way a tenant's agent does: `call_tool` over `/mcp` with its mcp-scoped key. */
  async function saveNote(plugin: string, text: string): Promise<string> {
    const client = new Client({ name: 'tenant-agent', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tenantKey}` } } });
    await client.connect(transport);
    try {
      const result = (await client.callTool({ name: 'call_tool', arguments: { name: `${plugin}__save_note`, arguments: { text } } }, undefined, { timeout: 120_000 })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
      const body = result.content.map((part) => part.text ?? '').join('');
      assert.notEqual(result.isError, true, body);
      return body;
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  }

  async function wake(plugin: string): Promise<DormantReport> {
    // The gateway may put a warning for the model before a tool result it finds suspicious.
    const text = await saveNote(plugin, triggerNote(targets));
    return JSON.parse(text.slice(text.indexOf('{"uid"'))) as DormantReport;
  }

  /** What must hold at every level: not root, no capability, no hub environment, no hub file. */
  async function assertContained(report: DormantReport, label: string): Promise<void> {
    assert.equal(report.uid, 65534, `${label}: uid`);
    assert.equal(report.gid, 65534, `${label}: gid`);
    assert.equal(Number.parseInt(report.capEff, 16), 0, `${label}: capabilities ${report.capEff}`);
    assert.match(report.files['/etc/shadow']!, /^ERR/, `${label}: /etc/shadow`);
    assert.match(report.files[join(home, 'secret.key')]!, /^ERR|^read 0 bytes$/, `${label}: the hub key`);
    // A folder on the way to one of its own binds exists in its view, holding only that way on:
    // the hub's home shows at most the skeleton to its own plugin and state folders, never a file.
    const listed = (folder: string): string[] => {
      const outcome = report.folders[folder]!;
      return outcome.startsWith('ERR') ? [] : (JSON.parse(outcome.slice('listed '.length)) as string[]);
    };
    assert.deepEqual(listed(home).filter((name) => !['plugins', 'state'].includes(name)), [], `${label}: the hub home shows ${report.folders[home]}`);
    assert.ok(listed(join(home, 'state')).length <= 1, `${label}: other plugins' state folders: ${report.folders[join(home, 'state')]}`);
    for (const folder of targets.folders.filter((folder) => folder !== home && folder !== join(home, 'state'))) assert.deepEqual(listed(folder), [], `${label}: ${folder} shows ${report.folders[folder]}`);
    // A write may land in the sandbox's own throwaway root; what matters is that the host never sees it.
    for (const file of targets.writes) assert.equal(existsSync(file), false, `${label}: wrote ${file} on the host (${report.writes[file]})`);
    assert.deepEqual(report.env.filter((name) => /QUIVER_(?!SUPERVISOR_ID)|DATABASE|SECRET|^USER$|^LOGNAME$/.test(name)), [], `${label}: the hub environment`);
    // The host's view: every process a supervisor started runs as nobody with no capability.
    const processes = await settledMarkedProcesses();
    assert.ok(processes.length > 0, 'the plugin process is found from the host');
    for (const process of processes) {
      assert.match(process.uids, /^65534\s+65534\s+65534\s+65534$/, `${label}: ${JSON.stringify(process)}`);
      assert.equal(Number.parseInt(process.capEff, 16), 0, `${label}: ${JSON.stringify(process)}`);
    }
  }

  before(async () => {
    if (needs) return;
    root = mkdtempSync(join(tmpdir(), 'quiver-dormant-'));
    chmodSync(root, 0o755);
    // The new user's accident: the plugin folder they add holds the hub's home.
    const folder = await writeDormantPlugin(root, 'notes-folder');
    home = join(folder, '.quiver');
    const store = await processStore(backend);
    drop = store.drop;
    app = await createApp(
      loadConfig({
        ...store.env,
        QUIVER_HOME: home,
        QUIVER_LOG_LEVEL: 'silent',
        QUIVER_JOBS_POLL_MS: '50',
        QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0',
        QUIVER_VERIFY_ON_INSTALL: 'off',
        // No registry is needed for these sources; a closed port keeps the run offline.
        QUIVER_VERIFY_REGISTRY_URL: 'http://127.0.0.1:9',
        QUIVER_VERIFY_STAGE_TIMEOUT_MS: '90000',
      }),
    );
    // The key file is made on first use; the same call the hub makes, so it is there to steal.
    loadSecretKey({ homeDir: home });
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    tenantKey = (await app.apiKeys.create({ name: 'tenant agent', scopes: ['mcp'] })).key;
    listener = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
    const dataFolder = join(home, 'data');
    targets = {
      files: [join(home, 'secret.key')],
      folders: [home, ...(backend.name === 'pglite' ? [dataFolder] : []), join(home, 'state')],
      writes: [join(home, 'dormant.txt'), join(root, 'dormant.txt')],
      connect: [{ host: '127.0.0.1', port: 5432 }, { host: '127.0.0.1', port: Number(new URL(server.url).port) }, { host: '127.0.0.1', port: listenerPort }],
    };
    assert.ok(existsSync(join(home, 'secret.key')), 'the hub has its key file');
    if (backend.name === 'pglite') assert.ok(existsSync(join(dataFolder, 'PG_VERSION')) || readdirSync(dataFolder).length > 0, 'the hub has its data folder');
  });

  after(async () => {
    if (needs) return;
    await server?.close();
    await app?.close();
    await new Promise<void>((resolve) => listener?.close(() => resolve()));
    await drop?.();
    rmSync(root, { recursive: true, force: true });
  });

  it('from a folder holding the hub home: verified at most COMMUNITY, contained, and no grant above COMMUNITY', { skip: needs, timeout: 600_000 }, async (t) => {
    const folder = join(root, 'notes-folder');
    const added = await quiver('plugin', 'add', folder, '--name', 'notes-folder');
    assert.equal(added.code, 0, added.stderr);
    const verified = await quiver('plugin', 'verify', 'notes-folder', '--json');
    assert.equal(verified.code, 0, verified.stderr);
    const report = JSON.parse(verified.stdout) as { overallScore: number; grade: string; recommendation: { trustLevel: string; scoreTrustLevel: string } };
    t.diagnostic(`folder: score ${report.overallScore} (${report.grade}), score band ${report.recommendation.scoreTrustLevel}, verified ${report.recommendation.trustLevel}`);
    assert.ok(['UNVERIFIED', 'COMMUNITY'].includes(report.recommendation.trustLevel), `verified at ${report.recommendation.trustLevel} (score ${report.overallScore})`);
    assert.equal(await saveNote('notes-folder', 'buy milk'), 'saved: buy milk', 'it behaves normally');

    const woken = await wake('notes-folder');
    t.diagnostic(`folder, verified: ${JSON.stringify(woken)}`);
    await assertContained(woken, 'verified, from a folder');
    for (const [address, outcome] of Object.entries(woken.connect)) assert.match(outcome, /^ERR/, `reached ${address}`);

    const refused = await quiver('plugin', 'trust', 'notes-folder', '--level', 'OFFICIAL', '--reason', 'I wrote it');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /cannot grant OFFICIAL to 'notes-folder': its source is local folder .*not pinned.*reinstall it from git or npm/s);
    const shown = await quiver('plugin', 'trust', 'notes-folder', '--json');
    assert.equal(JSON.parse(shown.stdout).grant, null, 'nothing was recorded');
  });

  it('from a git commit: verified at most COMMUNITY; the admin grant of OFFICIAL is recorded and it still runs as nobody, blind to the hub', { skip: needs, timeout: 600_000 }, async (t) => {
    const work = join(root, 'repo');
    await writeDormantPlugin(root, 'repo');
    for (const args of [['init', '--quiet', '--initial-branch=main'], ['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'notes']]) await git('git', args, { cwd: work });
    const added = await quiver('plugin', 'add', `file://${work}`, '--name', 'notes-git');
    assert.equal(added.code, 0, added.stderr);
    const verified = await quiver('plugin', 'verify', 'notes-git', '--json');
    assert.equal(verified.code, 0, verified.stderr);
    const gitReport = JSON.parse(verified.stdout) as { overallScore: number; grade: string; recommendation: { trustLevel: string; scoreTrustLevel: string } };
    const level = gitReport.recommendation.trustLevel;
    t.diagnostic(`git: score ${gitReport.overallScore} (${gitReport.grade}), score band ${gitReport.recommendation.scoreTrustLevel}, verified ${level}`);
    assert.ok(['UNVERIFIED', 'COMMUNITY'].includes(level), `verified at ${level}`);
    const before = await wake('notes-git');
    await assertContained(before, 'verified, from git');
    for (const [address, outcome] of Object.entries(before.connect)) assert.match(outcome, /^ERR/, `reached ${address}`);

    // The tenant's key cannot change trust, by the API…
    const denied = await fetch(`${server.url}/api/v1/plugins/notes-git/trust`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenantKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ level: 'OFFICIAL', reason: 'let me in' }),
    });
    assert.equal(denied.status, 403);
    assert.equal(JSON.parse((await quiver('plugin', 'trust', 'notes-git', '--json')).stdout).grant, null);

    // …the admin can, on a pinned source, and it is recorded with who and why.
    const granted = await quiver('plugin', 'trust', 'notes-git', '--level', 'OFFICIAL', '--reason', 'our own notes server, reviewed');
    assert.equal(granted.code, 0, granted.stderr);
    const view = JSON.parse((await quiver('plugin', 'trust', 'notes-git', '--json')).stdout) as { effective: { level: string }; grant: { level: string; actor: string; reason: string; createdAt: string } };
    assert.equal(view.effective.level, 'OFFICIAL');
    assert.deepEqual([view.grant.level, view.grant.reason], ['OFFICIAL', 'our own notes server, reviewed']);
    assert.match(view.grant.actor, /^cli/);

    const after = await wake('notes-git');
    t.diagnostic(`git, granted OFFICIAL: ${JSON.stringify(after)}`);
    await assertContained(after, 'granted OFFICIAL');
    // OFFICIAL's one loosening is the host network (docs/plugins.md): the test's own listener answers.
    assert.equal(after.connect[`127.0.0.1:${listenerPort}`], 'connected', JSON.stringify(after.connect));
  });
});
