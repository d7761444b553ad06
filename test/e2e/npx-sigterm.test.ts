/**
 * Stopping is stopping (issue #26): SIGTERM to `npx quiver serve` ends npm and its `sh -c`
 * wrapper but reaches no further, so Quiver watches for the process that launched it to go
 * away. Real npx on a project with Quiver installed, a real sandboxed plugin running under the
 * server; afterwards no process of that tree is left and the port is closed.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';
import { repoRoot } from '../plugins/helpers.ts';
import { controlSocketPath } from '../../src/store/control-socket.ts';

/** A process as /proc shows it: its parent, start time (to tell a reused pid) and command line. */
/** Requests on a loaded 2-core machine: starting the binary and a sandboxed plugin can take minutes. */
const SLOW = { timeout: 300_000 };

interface ProcessInfo {
  pid: number;
  ppid: number;
  start: string;
  command: string;
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(fields[1]), start: fields[19] ?? '', command };
  } catch {
    return undefined;
  }
}

/** Every process below `root` (children, theirs, …). */
function descendants(root: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProcess(Number(name)))
    .filter((info): info is ProcessInfo => info !== undefined);
  const found: ProcessInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const info of all) {
      if (info.ppid !== parent) continue;
      found.push(info);
      queue.push(info.pid);
    }
  }
  return found;
}

/** True while the very process of the snapshot (not a reused pid) exists and is not a zombie. */
function stillRunning(info: ProcessInfo): boolean {
  try {
    const stat = readFileSync(`/proc/${info.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] === info.start && fields[0] !== 'Z';
  } catch {
    return false;
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('SIGTERM to npx quiver serve', { timeout: 600_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let npx: ChildProcess | undefined;
  let tree: ProcessInfo[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-npx-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    // A project that has Quiver installed, as `npm install quiver` leaves it.
    const project = join(root, 'project');
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'uses-quiver', version: '1.0.0', private: true }));
    symlinkSync(repoRoot, join(project, 'node_modules', 'quiver'));
    symlinkSync('../quiver/bin/quiver.mjs', join(project, 'node_modules', '.bin', 'quiver'));
    const folder = await createRawPluginFolder(root, 'echo-plugin');
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
    const added = await runBinary(['plugin', 'add', folder, '--name', 'echo-plugin'], env, 180_000);
    assert.equal(added.code, 0, added.stderr);
    npx = spawn('npx', ['--no', 'quiver', 'serve', '--http', '127.0.0.1:0', '--json'], {
      cwd: project,
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  });

  after(async () => {
    // Whatever is left (the mechanism off): killed by pid, so the folder can go.
    for (const info of tree) if (stillRunning(info)) process.kill(info.pid, 'SIGKILL');
    if (npx && npx.exitCode === null) npx.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('stops the server and its plugin sandboxes, and closes the port', async (t) => {
    let stdout = '';
    let stderr = '';
    npx!.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npx quiver serve did not start; stderr: ${stderr}`)), 240_000);
      npx!.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('{'));
        if (!line) return;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      });
    });
    const port = Number(new URL(url).port);

    // A session through the running server starts the plugin's sandbox under it.
    const client = new Client({ name: 'npx-sigterm-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env }, stderr: 'ignore' }),
      SLOW,
    );
    const echoed = await client.callTool({ name: 'call_tool', arguments: { name: 'echo-plugin__echo', arguments: { text: 'hello' } } }, undefined, SLOW);
    assert.deepEqual((echoed as { content: Array<{ text: string }> }).content.map((part) => part.text), ['hello']);
    await client.close();

    tree = descendants(npx!.pid!);
    const commands = tree.map((info) => info.command);
    assert.ok(commands.some((command) => command.includes('bin/quiver') && command.includes('serve')), `quiver runs under npx: ${commands.join(' | ')}`);
    assert.ok(commands.some((command) => command.startsWith('bwrap ') || command.includes('server.mjs')), `the plugin runs under the server: ${commands.join(' | ')}`);

    const started = performance.now();
    npx!.kill('SIGTERM');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const left = tree.filter(stillRunning);
      if (left.length === 0 && !(await portOpen(port))) break;
      if (Date.now() > deadline) assert.fail(`still running 60 s after SIGTERM: ${left.map((info) => `${info.pid} ${info.command}`).join(' | ')}; port open: ${await portOpen(port)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.diagnostic(`every process gone and the port closed ${Math.round(performance.now() - started)} ms after SIGTERM to npx`);
    assert.ok(!existsSync(controlSocketPath(env.QUIVER_DATA_DIR!)), 'the server stopped cleanly: its control socket is removed');
  });
});
