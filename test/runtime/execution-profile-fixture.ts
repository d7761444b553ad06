/**
 * @module test/runtime/execution-profile-fixture
 * A plugin folder whose quiver.json carries an intelligence document with an execution profile
 * (issue #11), serving a one-file MCP server with no imports outside Node (so it runs in the
 * UNVERIFIED sandbox): `echo`; `slow` answers after `ms` (default 5 s); `count` answers how
 * many tools/call requests this process received, itself included; `stamp` waits `ms` and
 * answers `{start, end}` in epoch milliseconds.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SERVER = `import { createInterface } from 'node:readline';
const tools = ['echo', 'slow', 'count', 'stamp'].map((name) => ({
  name,
  description: 'Execution profile fixture tool ' + name + '.',
  inputSchema: { type: 'object', properties: { ms: { type: 'number' }, text: { type: 'string' } } },
}));
let calls = 0;
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const text = (value) => ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }] });
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });
  const args = message.params?.arguments ?? {};
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'profile-fixture', version: '1.0.0' } });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call': {
      calls += 1;
      const name = message.params.name;
      if (name === 'echo') return reply(text(String(args.text ?? '')));
      if (name === 'count') return reply(text(String(calls)));
      if (name === 'slow') return setTimeout(() => reply(text('finally')), args.ms ?? 5000);
      const start = Date.now();
      return setTimeout(() => reply(text({ start, end: Date.now() })), args.ms ?? 200);
    }
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } });
  }
});
`;

/** Writes the fixture plugin into `root/name` with `intelligence` as its PID; returns the folder. */
export async function createProfilePlugin(root: string, name: string, intelligence: Record<string, unknown>): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
  await writeFile(join(folder, 'server.mjs'), SERVER);
  const metadata = {
    name,
    version: '1.0.0',
    description: 'Execution profile fixture server',
    launch: { command: 'node', args: ['server.mjs'] },
    intelligence: { version: '1.0', pluginId: name, ...intelligence },
  };
  await writeFile(join(folder, 'quiver.json'), `${JSON.stringify(metadata, null, 2)}\n`);
  return folder;
}
