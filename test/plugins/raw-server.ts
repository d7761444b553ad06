/**
 * @module test/plugins/raw-server
 * A plugin folder holding a whole MCP server in one file with no imports outside Node, so it
 * runs under the UNVERIFIED sandbox of an app wired from configuration (which binds only
 * /usr and the plugin folder). `mode.txt` beside it chooses the behaviour on start:
 * `normal`, or `crash` (exit 3 before the handshake); flip it after install to break the plugin.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SERVER = `// Newline-delimited JSON-RPC over stdio: initialize, ping, tools/list, tools/call.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

let mode = 'normal';
try { mode = readFileSync(new URL('./mode.txt', import.meta.url), 'utf8').trim(); } catch {}
if (mode === 'crash') {
  process.stderr.write('raw fixture: crashing on start\\n');
  process.exit(3);
}
const tools = [
  { name: 'echo', description: 'Echo the given text back unchanged.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'fail', description: 'Always answers with a tool error.', inputSchema: { type: 'object', properties: {} } },
];
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw-fixture', version: '1.0.0' } });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call':
      if (message.params.name === 'echo') return reply({ content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] });
      return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } });
  }
});
`;

/** Writes the raw server plugin into `root/name` and returns the folder. */
export async function createRawPluginFolder(root: string, name: string): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
  await writeFile(join(folder, 'server.mjs'), SERVER);
  await writeFile(join(folder, 'mode.txt'), 'normal\n');
  await writeFile(join(folder, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', description: 'Raw MCP fixture server', main: 'server.mjs' }, null, 2)}\n`);
  return folder;
}

/** Makes the plugin in `folder` exit on start from now on. */
export async function breakRawPlugin(folder: string): Promise<void> {
  await writeFile(join(folder, 'mode.txt'), 'crash\n');
}
