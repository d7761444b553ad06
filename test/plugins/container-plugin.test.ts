/**
 * Container plugins, for real (issue #26 "containers, honestly"): an image built here (the Node
 * binary and an MCP server on SDK 1.x, test/helpers/container-image.ts) run by the podman the
 * machine has (scripts/provision/system.sh installs it; a machine where it cannot run FAILS
 * this file). An imported Claude Desktop `docker run … IMAGE` entry is installed, listed and
 * called through `quiver serve --stdio`; inside, the container runs as uid 65534 on a read-only
 * root with no network; the config's bind mount (a host-path grant) is visible, the hub's home
 * is not; the secret arrives by name and is on no command line; closing the client stops and
 * removes the container; an egress rule does not open its network. Both backends.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { buildServerImage, testEngine } from '../helpers/container-image.ts';
import { ownerLabel, removeContainer, sweepOrphanContainers } from '../../src/runtime/container.ts';

const SECRET = 'box-secret-7f3a9c';
let root: string;
let shared: string;
let image: string;
let engine: string;
let listener: Server;
let hostAddress: string;
let listenerPort: number;

/** Names of the running containers carrying `label`. */
function containers(label: string): string[] {
  return execFileSync(engine, ['ps', '--filter', `label=${label}`, '--format', '{{.Names}}'], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Every process's command line, to prove a value is on none of them. */
function commandLines(): string {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    })
    .join('\n');
}

before(async () => {
  engine = testEngine();
  image = buildServerImage(join(import.meta.dirname, '..', 'fixtures', 'container-plugin', 'server.mjs'), 'quiver-test-container-fixture');
  root = mkdtempSync(join(tmpdir(), 'quiver-container-'));
  chmodSync(root, 0o755);
  shared = join(root, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o755);
  writeFileSync(join(shared, 'hello.txt'), 'hello from the host\n', { mode: 0o644 });
  // A TCP listener the host itself reaches on its own non-loopback address: a container with
  // network could reach it too; one without cannot.
  hostAddress = Object.values(networkInterfaces()).flat().find((address) => address?.family === 'IPv4' && !address.internal)?.address ?? assert.fail('no non-loopback IPv4 address here');
  listener = createServer((socket) => {
    socket.on('error', () => undefined); // the probe may hang up first
    socket.end('hi\n');
  });
  await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
  listenerPort = (listener.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => listener.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

describeEachBackend('container plugins (podman)', (backend) => {
  let env: Record<string, string>;
  let home: string;
  let drop: () => Promise<void>;
  const quiver = (...args: string[]) => runBinary([...args, '--json'], env, 600_000);

  before(async () => {
    const store = await processStore(backend);
    drop = store.drop;
    home = mkdtempSync(join(root, `home-${backend.name}-`));
    chmodSync(home, 0o755);
    writeFileSync(join(home, 'hub-secret.txt'), 'the hub only\n', { mode: 0o644 });
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data'), ...store.env };
  });
  after(async () => drop());

  it('imports a docker run entry: installed, listed and called through quiver serve --stdio, inside the rules; closing the client removes the container', { timeout: 900_000 }, async () => {
    const config = join(home, 'claude_desktop_config.json');
    writeFileSync(config, JSON.stringify({
      mcpServers: {
        boxed: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'BOX_TOKEN', '-v', `${shared}:/data:ro`, '--network', 'host', image, '/data'], env: { BOX_TOKEN: SECRET } },
      },
    }));
    type Outcome = { entry: string; plugin: string; status: string; reason?: string; tools?: number; detail?: string; warnings: string[] };
    const dry = await quiver('import', config, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    const planned = (JSON.parse(dry.stdout) as { servers: Outcome[] }).servers[0]!;
    assert.equal(planned.status, 'would-install', JSON.stringify(planned));
    assert.match(planned.detail ?? '', new RegExp(`host paths ${shared} \\(read-only\\)`));
    const imported = await quiver('import', config);
    assert.equal(imported.code, 0, imported.stderr);
    const outcome = (JSON.parse(imported.stdout) as { servers: Outcome[] }).servers[0]!;
    assert.equal(outcome.status, 'installed', JSON.stringify(outcome));
    assert.equal(outcome.tools, 5);
    assert.match(outcome.warnings.join('\n'), /--network host is replaced/);
    assert.ok(!imported.stdout.includes(SECRET) && !dry.stdout.includes(SECRET), 'the secret is not echoed');

    const shown = await quiver('plugin', 'show', 'boxed');
    assert.equal(shown.code, 0, shown.stderr);
    const { plugin } = JSON.parse(shown.stdout) as { plugin: { sourceType: string; source: Record<string, unknown> } };
    assert.equal(plugin.sourceType, 'container');
    assert.equal(plugin.source['image'], image);
    assert.match(String(plugin.source['imageId']), /^[0-9a-f]{64}$/, 'pinned by the image id');
    assert.ok(!shown.stdout.includes(SECRET));
    // Trust is honest about what it cannot see: the image is pinned by id, its contents not analysed.
    const verified = await quiver('plugin', 'verify', 'boxed');
    assert.equal(verified.code, 0, verified.stderr);
    const report = JSON.parse(verified.stdout) as { overallScore: number; recommendation: { trustLevel: string }; stages: Record<string, { score: number; issues: Array<{ code: string }> }> };
    assert.ok(report.stages['source']!.issues.some((issue) => issue.code === 'container_image_unseen'), JSON.stringify(report.stages['source']));
    assert.equal(report.stages['staticAnalysis']!.score, 0);
    assert.ok(report.stages['staticAnalysis']!.issues.some((issue) => issue.code === 'container-image-unseen'));
    assert.ok(report.overallScore <= 80, `static analysis vouches for nothing: ${report.overallScore}`);
    assert.ok(['UNVERIFIED', 'COMMUNITY'].includes(report.recommendation.trustLevel), report.recommendation.trustLevel);

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'],
      env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'container-plugin-test', version: '1.0.0' });
    await client.connect(transport, { timeout: 120_000 });
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<string> => {
      const result = (await client.callTool({ name: `boxed__${name}`, arguments: args }, undefined, { timeout: 120_000 })) as { content: Array<{ text?: string }>; isError?: boolean };
      assert.notEqual(result.isError, true, JSON.stringify(result));
      return result.content.map((block) => block.text ?? '').join('');
    };
    let closed = false;
    try {
      const { tools } = await client.listTools(undefined, { timeout: 120_000 });
      assert.deepEqual(tools.map((tool) => tool.name).filter((name) => name.startsWith('boxed__')).sort(), ['boxed__connect', 'boxed__echo', 'boxed__env', 'boxed__read', 'boxed__whoami']);
      assert.equal(await call('echo', { text: 'contained' }), 'CONTAINED');
      const running = containers('io.quiver.plugin=boxed');
      assert.equal(running.length, 1, `one container runs the plugin: ${running.join(', ')}`);
      assert.match(running[0]!, /^quiver-\d+-boxed-\d+$/);

      const who = JSON.parse(await call('whoami')) as { uid: number; interfaces: string[]; root: string; memoryLimit: string | null; capabilities: string | null };
      assert.equal(who.uid, 65534, 'the unprivileged user');
      assert.equal(who.capabilities, '0000000000000000', 'no capabilities');
      assert.equal(who.memoryLimit, String(512 * 1024 * 1024), 'the policy memory limit, enforced by the kernel');
      assert.deepEqual(who.interfaces, ['lo'], 'no network: loopback only (the config asked for --network host)');
      assert.equal(who.root, 'EROFS', 'a read-only root');

      // The grant is visible (the config's /data argument now names the host folder, bound at its path) ...
      assert.equal(await call('read', { path: 'hello.txt' }), 'hello from the host\n');
      assert.equal(await call('read', { path: join(shared, 'hello.txt') }), 'hello from the host\n');
      // ... read-only; the hub's home and data folder are not there at all.
      assert.match(await call('read', { path: join(home, 'hub-secret.txt') }), /^ERROR ENOENT/);
      assert.match(await call('read', { path: join(home, 'data') }), /^ERROR ENOENT/);
      // The host reaches its listener; the container cannot.
      const fromHost = await new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['-e', `require('net').connect(${listenerPort}, '${hostAddress}').on('connect', () => { console.log('CONNECTED'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); })`], { stdio: ['ignore', 'pipe', 'ignore'] });
        let out = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.on('close', () => resolve(out.trim()));
      });
      assert.equal(fromHost, 'CONNECTED', 'the listener is reachable from the host');
      assert.match(await call('connect', { host: hostAddress, port: listenerPort }), /^ERROR (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timeout)/);
      // The secret arrives by name, and no process shows it on its command line.
      assert.equal(await call('env', { name: 'BOX_TOKEN' }), SECRET);
      assert.ok(!commandLines().includes(SECRET), 'the secret is on no command line');

      await client.close();
      closed = true;
      await waitFor(() => containers('io.quiver.plugin=boxed').length === 0, 'the container to be removed after the client left');
    } finally {
      if (!closed) await client.close();
    }

    // An egress rule does not open a container's network: the allow-list is not carried into
    // containers (docs/plugins.md), so it stays closed rather than open to everything.
    const allowed = await quiver('plugin', 'allow', 'boxed', `${hostAddress}:${listenerPort}`, '--reason', 'container test');
    assert.equal(allowed.code, 0, allowed.stderr);
    const again = new Client({ name: 'container-plugin-test', version: '1.0.0' });
    await again.connect(new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'], env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env }, stderr: 'pipe' }), { timeout: 120_000 });
    try {
      const result = (await again.callTool({ name: 'boxed__connect', arguments: { host: hostAddress, port: listenerPort } }, undefined, { timeout: 120_000 })) as { content: Array<{ text?: string }> };
      assert.match(result.content[0]?.text ?? '', /^ERROR (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timeout)/);
    } finally {
      await again.close();
    }
    await waitFor(() => containers('io.quiver.plugin=boxed').length === 0, 'the second container to be removed');
  });

  it('refuses a container source whose image the engine cannot find or pull, naming the engine', { timeout: 300_000 }, async () => {
    const added = await quiver('plugin', 'add', 'container:localhost/quiver-no-such-image:1', '--name', 'missing');
    assert.notEqual(added.code, 0);
    assert.match(added.stderr + added.stdout, /(docker|podman) cannot find or pull the image 'localhost\/quiver-no-such-image:1'/);
  });
});

it('without a container engine, an imported docker entry is refused with the exact command (dry run and real run alike)', { timeout: 300_000 }, async () => {
  // A PATH with Node only: neither docker nor podman.
  const bin = mkdtempSync(join(root, 'bin-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  const home = mkdtempSync(join(root, 'home-none-'));
  const config = join(home, 'config.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { boxed: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'BOX_TOKEN', image], env: { BOX_TOKEN: SECRET } } } }));
  const env = { PATH: bin, QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') };
  for (const dryRun of [['--dry-run'], []]) {
    const result = await runBinary(['import', config, ...dryRun, '--json'], env, 300_000);
    assert.equal(result.code, 0, result.stderr);
    const outcome = (JSON.parse(result.stdout) as { servers: Array<{ status: string; reason?: string }> }).servers[0]!;
    assert.equal(outcome.status, 'skipped');
    assert.match(outcome.reason ?? '', /neither docker nor podman is on PATH/);
    assert.ok((outcome.reason ?? '').includes(`docker run --rm -i --cap-drop ALL --security-opt no-new-privileges --read-only`), outcome.reason);
    assert.ok(!result.stdout.includes(SECRET));
  }
});

it('removes containers whose Quiver is gone (killed before it could stop them), and only those', { timeout: 300_000 }, async () => {
  const gone = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => gone.once('close', resolve));
  const run = (owner: number, name: string) =>
    execFileSync(engine, ['run', '-d', '--rm', '--name', name, '--label', `${ownerLabel}=${owner}`, '--label', 'io.quiver.plugin=sweep-test', '--network', 'none', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096', '--entrypoint', '/usr/bin/node', image, '-e', 'setInterval(() => {}, 1000)'], { stdio: 'pipe' });
  const orphan = `quiver-sweep-orphan-${process.pid}`;
  const owned = `quiver-sweep-owned-${process.pid}`;
  run(gone.pid!, orphan);
  run(process.pid, owned);
  try {
    assert.deepEqual(containers('io.quiver.plugin=sweep-test').sort(), [orphan, owned].sort());
    assert.ok(sweepOrphanContainers(process.env.PATH ?? '/usr/bin:/bin') >= 1);
    assert.deepEqual(containers('io.quiver.plugin=sweep-test'), [owned], 'the orphan is removed; a live owner keeps its container');
  } finally {
    // One at a time: podman 4.3's `rm -f` of several names, one already gone, removes none of them.
    for (const name of [orphan, owned]) await removeContainer(engine, name);
    assert.deepEqual(containers('io.quiver.plugin=sweep-test'), [], 'nothing left behind');
  }
});
