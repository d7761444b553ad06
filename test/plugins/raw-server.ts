/**
 * @module test/plugins/raw-server
 * A plugin folder holding a whole MCP server in one file with no imports outside Node, so it
 * runs under the UNVERIFIED sandbox of an app wired from configuration (which binds only
 * /usr and the plugin folder). `mode.txt` beside it chooses the behaviour on start:
 * `normal`, or `crash` (exit 3 before the handshake); flip it after install to break the plugin.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeRawPluginFolder, type RawServerParts } from '../helpers/raw-mcp-server.ts';

const SERVER: RawServerParts = {
  name: 'raw-fixture',
  imports: ["import { readFileSync } from 'node:fs';"],
  tools: [
    { name: 'echo', description: 'Echo the given text back unchanged.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    { name: 'fail', description: 'Always answers with a tool error.', inputSchema: { type: 'object', properties: {} } },
  ],
  prelude: `
    let mode = 'normal';
    try { mode = readFileSync(new URL('./mode.txt', import.meta.url), 'utf8').trim(); } catch {}
    if (mode === 'crash') {
      process.stderr.write('raw fixture: crashing on start\\n');
      process.exit(3);
    }`,
  callTool: `
    if (message.params.name === 'echo') return reply({ content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] });
    return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });`,
};

/** Writes the raw server plugin into `root/name` and returns the folder. */
export async function createRawPluginFolder(root: string, name: string): Promise<string> {
  return writeRawPluginFolder(root, name, { server: SERVER, description: 'Raw MCP fixture server', files: { 'mode.txt': 'normal\n' } });
}

/** Makes the plugin in `folder` exit on start from now on. */
export async function breakRawPlugin(folder: string): Promise<void> {
  await writeFile(join(folder, 'mode.txt'), 'crash\n');
}
