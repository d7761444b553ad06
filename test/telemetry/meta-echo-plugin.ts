/**
 * @module test/telemetry/meta-echo-plugin
 * A plugin folder holding a whole MCP server in one file with no imports outside Node (so it
 * runs under the UNVERIFIED sandbox), whose `echo_meta` tool answers with the `params._meta`
 * of the `tools/call` it received: the test reads the W3C trace context Quiver sent it.
 * `fail` always answers with a tool error.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SERVER = `// Newline-delimited JSON-RPC over stdio: initialize, ping, tools/list, tools/call.
import { createInterface } from 'node:readline';

const tools = [
  { name: 'echo_meta', description: 'Echo the request metadata (_meta, trace context headers) this server received, for tracing diagnostics.', inputSchema: { type: 'object', properties: {} } },
  { name: 'fail', description: 'Always answers with a tool error, for testing error handling.', inputSchema: { type: 'object', properties: {} } },
];
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'meta-echo', version: '1.0.0' } });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call':
      if (message.params.name === 'echo_meta') return reply({ content: [{ type: 'text', text: JSON.stringify(message.params._meta ?? null) }] });
      return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } });
  }
});
`;

/** Writes the plugin into `root/name` and returns the folder. */
export async function createMetaEchoPlugin(root: string, name: string): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
  await writeFile(join(folder, 'server.mjs'), SERVER);
  await writeFile(join(folder, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', description: 'Echoes the _meta of each tools/call', main: 'server.mjs' }, null, 2)}\n`);
  return folder;
}
