/**
 * @module test/helpers/raw-mcp-server
 * Test plugins that hold a whole MCP server in one file with no imports outside Node, so they run
 * under the UNVERIFIED sandbox of an app wired from configuration (which binds only /usr and the
 * plugin folder). This module runs in the test process and writes that file as text: the
 * newline-delimited JSON-RPC loop every such fixture shares (initialize, ping, tools/list,
 * tools/call, -32601 for the rest; notifications ignored) around the parts a fixture says itself.
 * Nothing of this module is imported by the server it writes.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What one raw server says for itself; the rest is the shared loop. */
export interface RawServerParts {
  /** The server's `serverInfo.name`. */
  name: string;
  /** Extra `import … from 'node:…'` lines (Node's own modules only: the sandbox has nothing else). */
  imports?: readonly string[];
  /** The tool table, inlined as JSON; leave it out when `prelude` declares `tools` itself (read at start). */
  tools?: readonly unknown[];
  /** Source run once at start, after `send` and `tools` are declared. */
  prelude?: string;
  /**
   * Source of the `tools/call` branch: `message`, `tools`, `send` and `reply(result)` are in
   * scope, and it must `return reply(…)`.
   */
  callTool: string;
}

/** `source`'s lines with their common indentation replaced by `prefix`. */
function indented(source: string, prefix: string): string[] {
  const lines = source.replace(/^\n+|\s+$/g, '').split('\n');
  const common = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
  return lines.map((line) => (line.trim() === '' ? '' : prefix + line.slice(common)));
}

/** The server source for `parts`: one ES module, Node's own imports only. */
export function rawMcpServerSource(parts: RawServerParts): string {
  // The sandbox binds only /usr and the plugin folder: anything but Node's own modules would not load there.
  const foreign = (parts.imports ?? []).filter((line) => !/^import [^;]+ from 'node:[a-z_/]+';$/.test(line));
  if (foreign.length > 0) throw new Error(`a raw MCP server imports Node's own modules only: ${foreign.join(' ')}`);
  const lines = [
    '// Newline-delimited JSON-RPC over stdio: initialize, ping, tools/list, tools/call.',
    "import { createInterface } from 'node:readline';",
    ...(parts.imports ?? []),
    '',
    "const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');",
    ...(parts.tools ? [`const tools = ${JSON.stringify(parts.tools)};`] : []),
    ...(parts.prelude ? indented(parts.prelude, '') : []),
    "createInterface({ input: process.stdin }).on('line', (line) => {",
    "  if (line.trim() === '') return;",
    '  const message = JSON.parse(line);',
    '  if (message.id === undefined) return;',
    "  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });",
    '  switch (message.method) {',
    "    case 'initialize':",
    `      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: ${JSON.stringify(parts.name)}, version: '1.0.0' } });`,
    "    case 'ping':",
    '      return reply({});',
    "    case 'tools/list':",
    '      return reply({ tools });',
    "    case 'tools/call': {",
    ...indented(parts.callTool, '      '),
    '    }',
    '    default:',
    "      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } });",
    '  }',
    '});',
    '',
  ];
  return lines.join('\n');
}

/** A plugin folder's contents: the server and its package description, and any files beside them. */
export interface RawPluginFolder {
  server: RawServerParts;
  /** package.json's `description`. */
  description: string;
  /** More files to write beside server.mjs, by name. */
  files?: Readonly<Record<string, string>>;
}

/**
 * Writes `root/name` (readable by the sandbox user) with server.mjs, a package.json named `name`
 * and `files`; returns the folder.
 */
export async function writeRawPluginFolder(root: string, name: string, plugin: RawPluginFolder): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
  await writeFile(join(folder, 'server.mjs'), rawMcpServerSource(plugin.server));
  await writeFile(join(folder, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', description: plugin.description, main: 'server.mjs' }, null, 2)}\n`);
  for (const [file, text] of Object.entries(plugin.files ?? {})) await writeFile(join(folder, file), text);
  return folder;
}
