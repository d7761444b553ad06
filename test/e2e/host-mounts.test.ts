/**
 * Host folders as a declared permission (issue #26), end to end through the real binary, the
 * real sandbox and the real @modelcontextprotocol/server-filesystem from npm: a Claude Desktop
 * configuration naming a temporary folder is imported; the folder becomes a read-write grant
 * (who and when shown by `plugin show`), its env a credential listed by name, and the API host
 * its env names an egress rule confirmed with `--allow-egress`; an MCP client over `quiver serve --stdio` reads a file
 * there and writes one that lands on the host. A second plugin (a raw server that reads any
 * path it is given) without the grant cannot read the folder and its error names the grant
 * command; granted read-only while the client is connected, it reads the file at its next call
 * and cannot write there; neither sees the hub's home, secret key or data folder. A grant of the
 * hub's home, or of a folder holding it, is refused. Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { writeRawPluginFolder } from '../helpers/raw-mcp-server.ts';

/** A loaded 2-core machine: an npm install and sandboxed starts can take minutes. */
const SLOW = { timeout: 300_000 };
const filesystemVersion = (JSON.parse(readFileSync(join(process.cwd(), 'node_modules/@modelcontextprotocol/server-filesystem/package.json'), 'utf8')) as { version: string }).version;

/** A server with one tool that reads whatever path it is given: the sandbox alone decides what it sees. */
const READER = {
  name: 'path-reader',
  imports: ["import { readFileSync, writeFileSync } from 'node:fs';"],
  tools: [
    { name: 'read_path', description: 'Read a file at an absolute path.', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    { name: 'write_path', description: 'Write text to a file at an absolute path.', inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] } },
  ],
  callTool: `
    const args = message.params.arguments ?? {};
    try {
      if (message.params.name === 'write_path') {
        writeFileSync(String(args.path), String(args.text));
        return reply({ content: [{ type: 'text', text: 'written' }] });
      }
      return reply({ content: [{ type: 'text', text: readFileSync(String(args.path), 'utf8') }] });
    } catch (error) {
      return reply({ isError: true, content: [{ type: 'text', text: String(error.message) }] });
    }`,
};

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

describeEachBackend('host folders as a declared permission (issue #26)', (backend) => {
  let root: string;
  let home: string;
  let work: string;
  let env: Record<string, string>;
  let drop: () => Promise<void> = async () => {};
  let client: Client | undefined;
  let clientStderr = '';

  const quiver = async (...args: string[]) => runBinary(args, env, 900_000);
  const call = async (name: string, args: Record<string, unknown>) => (await client!.callTool({ name, arguments: args }, undefined, SLOW)) as CallToolResult;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-mounts-'));
    chmodSync(root, 0o755); // the sandbox user (uid 65534) must traverse to the granted folder
    home = join(root, 'home');
    work = join(root, 'work');
    mkdirSync(work);
    chmodSync(work, 0o777); // and write in it
    writeFileSync(join(work, 'hello.txt'), 'hello from the host\n');
    const store = await processStore(backend);
    drop = store.drop;
    env = { QUIVER_HOME: home, ...store.env };
    await writeRawPluginFolder(root, 'reader', { server: READER, description: 'Reads any path' });
    writeFileSync(
      join(root, 'claude_desktop_config.json'),
      // The env names an API host: its value is stored as a credential, the host proposed as egress.
      JSON.stringify({ mcpServers: { files: { command: 'npx', args: ['-y', `@modelcontextprotocol/server-filesystem@${filesystemVersion}`, work], env: { NOTES_API_URL: 'https://notes.example.com/v1' } } } }, null, 2),
    );
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    await drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('imports the filesystem server with its folder as a read-write grant, recorded with who and when', SLOW, async () => {
    const dry = await quiver('import', join(root, 'claude_desktop_config.json'), '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`would install\\s+files\\s+files\\s+from npm:@modelcontextprotocol/server-filesystem@${filesystemVersion.replace(/\./g, '\\.')}; host paths ${work} \\(read-write\\)`));
    assert.match(dry.stdout, /; egress: proposed notes\.example\.com/);
    const run = await quiver('import', join(root, 'claude_desktop_config.json'), '--allow-egress', '--json');
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const outcome = (JSON.parse(run.stdout) as { servers: Array<{ status: string; tools?: number; reason?: string; egress?: unknown }> }).servers[0]!;
    assert.equal(outcome.status, 'installed', outcome.reason);
    assert.ok((outcome.tools ?? 0) >= 10, `${outcome.tools} tools`);
    assert.deepEqual(outcome.egress, { proposed: ['notes.example.com'], allowed: true });
    const show = await quiver('plugin', 'show', 'files');
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, new RegExp(`host paths: ${work} \\(read-write; cli:[^,]+, \\d{4}-\\d\\d-\\d\\dT`));
    // The imported env is a credential, listed by name only (it was 'credentials: none').
    assert.match(show.stdout, /credentials: NOTES_API_URL=set/);
    assert.ok(!show.stdout.includes('notes.example.com/v1'), 'no credential value is printed');
    const egress = await quiver('plugin', 'egress', 'files');
    assert.match(egress.stdout, /notes\.example\.com\s+443\s+cli:\S+\s+proposed by quiver import/);
    const added = await quiver('plugin', 'add', join(root, 'reader'), '--name', 'reader', '--json');
    assert.equal(added.code, 0, added.stderr);
  });

  it("refuses a grant of the hub's home or of a folder holding it, and a missing path", SLOW, async () => {
    for (const path of [home, root, join(home, 'plugins')]) {
      const refused = await quiver('plugin', 'mount', 'files', `${path}:ro`);
      assert.notEqual(refused.code, 0, path);
      assert.match(refused.stderr, /the hub's own/, path);
    }
    const missing = await quiver('plugin', 'mount', 'files', join(root, 'nowhere'));
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /no such file or folder/);
    const list = await quiver('plugin', 'mount', 'files', '--json');
    assert.deepEqual((JSON.parse(list.stdout) as { mounts: Array<{ path: string; mode: string }> }).mounts.map((m) => [m.path, m.mode]), [[work, 'rw']]);
  });

  it('a client reads and writes the granted folder through Quiver; the plugin without the grant cannot, and is told how', SLOW, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'],
      env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (clientStderr += chunk.toString()));
    client = new Client({ name: 'host-mounts-test', version: '1.0.0' });
    await client.connect(transport, SLOW);
    const names = (await client.listTools(undefined, SLOW)).tools.map((tool) => tool.name);
    const tool = (plugin: string, suffix: string) => names.find((name) => name.startsWith(plugin) && name.endsWith(suffix)) ?? assert.fail(`no ${plugin} ${suffix} in ${names.join(', ')}`);

    const read = await call(tool('files', 'read_text_file'), { path: join(work, 'hello.txt') });
    assert.equal(read.isError ?? false, false, textOf(read));
    assert.match(textOf(read), /hello from the host/);
    const wrote = await call(tool('files', 'write_file'), { path: join(work, 'from-client.txt'), content: 'written through Quiver' });
    assert.equal(wrote.isError ?? false, false, textOf(wrote));
    assert.equal(readFileSync(join(work, 'from-client.txt'), 'utf8'), 'written through Quiver');

    // The second plugin has no grant: the folder is not in its sandbox, and the error says how to grant it.
    const denied = await call(tool('reader', 'read_path'), { path: join(work, 'hello.txt') });
    assert.equal(denied.isError, true);
    assert.match(textOf(denied), /ENOENT/);
    assert.ok(textOf(denied).includes(`quiver plugin mount reader ${work}`), textOf(denied));
    // Neither sees the hub: its home, secret key and (PGlite) data folder.
    for (const path of [join(home, 'secret.key'), join(home, 'data', 'PG_VERSION')]) {
      const hub = await call(tool('reader', 'read_path'), { path });
      assert.equal(hub.isError, true, path);
      assert.match(textOf(hub), /ENOENT/, path);
      assert.match(textOf(hub), /the hub's own/, path);
    }
    const filesHub = await call(tool('files', 'read_text_file'), { path: join(home, 'secret.key') });
    assert.equal(filesHub.isError, true);
  });

  it('a grant made while the client is connected applies at the next call; read-only stays read-only', SLOW, async () => {
    const granted = await quiver('plugin', 'mount', 'reader', work, '--reason', 'test');
    assert.equal(granted.code, 0, granted.stderr);
    assert.match(granted.stdout, /granted reader .* \(read-only\); the plugin starts with it at its next call/);
    const names = (await client!.listTools(undefined, SLOW)).tools.map((tool) => tool.name);
    const reader = (suffix: string) => names.find((name) => name.startsWith('reader') && name.endsWith(suffix))!;
    // The spec cache follows the change (same process through the socket, or NOTIFY on PostgreSQL).
    let read: CallToolResult | undefined;
    for (let attempt = 0; attempt < 30; attempt += 1) {
      read = await call(reader('read_path'), { path: join(work, 'hello.txt') });
      if (read.isError !== true) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    assert.equal(read!.isError ?? false, false, `${textOf(read!)}\n${clientStderr}`);
    assert.match(textOf(read!), /hello from the host/);
    const write = await call(reader('write_path'), { path: join(work, 'by-reader.txt'), text: 'no' });
    assert.equal(write.isError, true);
    assert.match(textOf(write), /EROFS|read-only/);
    assert.ok(textOf(write).includes(`quiver plugin mount reader ${work}:rw`), textOf(write));
    assert.equal(existsSync(join(work, 'by-reader.txt')), false);
    const show = await quiver('plugin', 'show', 'reader');
    assert.match(show.stdout, new RegExp(`host paths: ${work} \\(read-only; cli:`));
  });
});
