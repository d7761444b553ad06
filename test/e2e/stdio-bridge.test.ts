/**
 * One Quiver per data folder, any number of front doors (issue #26): `quiver serve --stdio`
 * started beside a running `quiver serve` — or beside another `--stdio` — bridges to it over
 * the control socket instead of exiting 4 on the folder's lock. Real processes: the binary,
 * real SDK clients over StdioClientTransport, a real sandboxed plugin.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';

/** Requests on a loaded 2-core machine: starting the binary and a sandboxed plugin can take minutes. */
const SLOW = { timeout: 300_000 };

interface StdioClient {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** Resolves when the transport closed (the quiver process ended). */
  closed: Promise<void>;
}

/** Starts `quiver serve --stdio FLAGS` under a real SDK client. */
async function connectStdio(env: Record<string, string>, flags: string[]): Promise<StdioClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QUIVER_BIN, 'serve', '--stdio', ...flags],
    env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'bridge-test', version: '1.0.0' });
  const closed = new Promise<void>((resolve) => {
    client.onclose = () => resolve();
  });
  try {
    await client.connect(transport, SLOW);
  } catch (error) {
    throw new Error(`quiver serve --stdio ${flags.join(' ')} did not connect: ${(error as Error).message}; stderr: ${stderr}`);
  }
  return { client, transport, stderr: () => stderr, closed };
}

function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((part) => part.text ?? '').join('\n');
}

/** Searches for the echo tool and calls it through `call_tool`; returns what came back. */
async function searchAndCall(stdio: StdioClient, words: string): Promise<{ found: string; echoed: string }> {
  const found = text(await stdio.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back unchanged' } }, undefined, SLOW));
  const echoed = text(await stdio.client.callTool({ name: 'call_tool', arguments: { name: 'echo-plugin__echo', arguments: { text: words } } }, undefined, SLOW));
  return { found, echoed };
}

/** The pid of the quiver process behind a client. */
function pidOf(stdio: StdioClient): number {
  const pid = stdio.transport.pid;
  assert.ok(pid, 'the stdio process runs');
  return pid;
}

describe('quiver serve --stdio beside a running Quiver', { timeout: 600_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let server: { child: ChildProcess } | undefined;
  const clients: StdioClient[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-bridge-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    const folder = await createRawPluginFolder(root, 'echo-plugin');
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
    server = await startServe(['--http', '127.0.0.1:0'], env, 300_000);
    for (const args of [
      ['plugin', 'add', folder, '--name', 'echo-plugin'],
      ['workspace', 'create', 'research'],
      ['workspace', 'create', 'empty'],
      ['plugin', 'enable', 'echo-plugin', '--workspace', 'research'],
      ['plugin', 'enable', 'echo-plugin', '--workspace', 'default'],
    ]) {
      const run = await runBinary(args, env, 180_000);
      assert.equal(run.code, 0, `quiver ${args.join(' ')}: ${run.stderr}`);
    }
  });

  after(async () => {
    await Promise.allSettled(clients.map((stdio) => stdio.client.close()));
    if (server) await stopChild(server.child);
    rmSync(root, { recursive: true, force: true });
  });

  it('serves two stdio clients at once, each with its own session and workspace, searching and calling a sandboxed plugin', async () => {
    const [research, standard] = await Promise.all([connectStdio(env, ['--workspace', 'research', '--user', 'ada']), connectStdio(env, ['--workspace', 'default'])]);
    clients.push(research, standard);
    const [a, b] = await Promise.all([searchAndCall(research, 'from research'), searchAndCall(standard, 'from default')]);
    assert.match(a.found, /echo-plugin__echo/);
    assert.match(b.found, /echo-plugin__echo/);
    assert.equal(a.echoed, 'from research');
    assert.equal(b.echoed, 'from default');
    // Both alive at the same time, neither refused with "data folder … is in use".
    assert.equal(research.transport.pid !== null && standard.transport.pid !== null, true);
    assert.doesNotMatch(research.stderr() + standard.stderr(), /in use/);
  });

  it('passes a 2026-07-28 client through unchanged beside a 2025 one', async () => {
    const legacy = await connectStdio(env, ['--workspace', 'research']);
    clients.push(legacy);
    const modern = new ModernClient({ name: 'bridge-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(
      new ModernStdioTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', '--workspace', 'research'], env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env }, stderr: 'pipe' }),
      SLOW,
    );
    try {
      const [modernFound, legacyFound] = await Promise.all([
        modern.callTool({ name: 'search_tools', arguments: { query: 'echo text back unchanged' } }, SLOW),
        legacy.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back unchanged' } }, undefined, SLOW),
      ]);
      assert.match(text(modernFound), /echo-plugin__echo/);
      assert.match(text(legacyFound), /echo-plugin__echo/);
      const echoed = await modern.callTool({ name: 'call_tool', arguments: { name: 'echo-plugin__echo', arguments: { text: 'from 2026' } } }, SLOW);
      assert.equal(text(echoed), 'from 2026');
    } finally {
      await modern.close();
    }
  });

  it("honours the bridged session's own identity: a workspace without the plugin does not see it", async () => {
    const empty = await connectStdio(env, ['--workspace', 'empty']);
    clients.push(empty);
    const found = text(await empty.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back unchanged' } }, undefined, SLOW));
    assert.doesNotMatch(found, /echo-plugin__echo/);
    const refused = await empty.client.callTool({ name: 'call_tool', arguments: { name: 'echo-plugin__echo', arguments: { text: 'x' } } }, undefined, SLOW).then(
      (result) => (result as { isError?: boolean }).isError === true,
      () => true,
    );
    assert.ok(refused, 'a tool outside the workspace cannot be called');
  });

  it('refuses a bad flag with the server-side validation, as a local --stdio would', async () => {
    const run = await runBinary(['serve', '--stdio', '--exposure', 'everything'], env, 60_000);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /exposure mode must be one of/);
  });

  it('ends the bridged sessions (exit 4, saying why) when the server stops', async () => {
    const open = clients.slice();
    assert.equal(await stopChild(server!.child), 0);
    server = undefined;
    await Promise.all(open.map((stdio) => stdio.closed));
    for (const stdio of open) assert.match(stdio.stderr(), /stopped; the session is over/);
  });

  it('serves stdio clients beside each other with no server: the first owns the folder and serves on for the others once its client closed stdin', async () => {
    const first = await connectStdio(env, ['--workspace', 'research']);
    const second = await connectStdio(env, ['--workspace', 'default']);
    clients.push(first, second);
    const [a, b] = await Promise.all([searchAndCall(first, 'first'), searchAndCall(second, 'second')]);
    assert.equal(a.echoed, 'first');
    assert.equal(b.echoed, 'second');
    // The owner's client hangs up the way a stdio client does first (its stdin ends), without a signal.
    const owner = pidOf(first);
    (first.transport as unknown as { _process: ChildProcess })._process.stdin!.end();
    assert.equal((await searchAndCall(second, 'still here')).echoed, 'still here');
    assert.ok(processAlive(owner), 'the owning process serves on while a bridged session remains');
    await second.client.close();
    await waitFor(() => !processAlive(owner), 60_000, 'the owner stops once the last bridged session has gone');
  });
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
