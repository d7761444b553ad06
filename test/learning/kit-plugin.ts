/**
 * @module test/learning/kit-plugin
 * A plugin folder serving the learned-example catalog (catalog-fixture.ts) as a real MCP
 * server in one file with no imports outside Node, so it runs in the app's sandbox. Every
 * tool answers "ok"; a call with `{"fail": true}` answers a tool error.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LEARNING_TOOLS } from './catalog-fixture.ts';

const server = (tools: unknown) => `// Newline-delimited JSON-RPC over stdio: initialize, ping, tools/list, tools/call.
import { createInterface } from 'node:readline';
const tools = ${JSON.stringify(tools)};
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'kit', version: '1.0.0' } });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call':
      if (message.params.arguments?.fail === true) return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });
      return reply({ content: [{ type: 'text', text: 'ok ' + message.params.name }] });
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } });
  }
});
`;

/** Writes the kit plugin into `root/kit` and returns the folder. */
export async function createKitPluginFolder(root: string): Promise<string> {
  const folder = join(root, 'kit');
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
  const tools = LEARNING_TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: { type: 'object', properties: { text: { type: 'string' }, fail: { type: 'boolean' } } },
  }));
  await writeFile(join(folder, 'server.mjs'), server(tools));
  await writeFile(join(folder, 'package.json'), `${JSON.stringify({ name: 'kit', version: '1.0.0', description: 'Learned-example test kit', main: 'server.mjs' }, null, 2)}\n`);
  return folder;
}
