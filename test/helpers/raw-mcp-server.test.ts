/**
 * The shared loop of the raw MCP test servers, run as a real process over stdio: the handshake,
 * ping, the tool table, a call through the fixture's own branch, -32601 for other methods, and
 * nothing at all for notifications or blank lines; a server that would import anything but
 * Node's own modules (which the sandbox could not load) is refused while it is written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { rawMcpServerSource, writeRawPluginFolder } from './raw-mcp-server.ts';

/** Sends `requests` one line each, then closes stdin; returns every line the server wrote. */
async function converse(server: string, requests: readonly unknown[]): Promise<unknown[]> {
  const child = spawn(process.execPath, [server], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: unknown[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => answers.push(JSON.parse(line)));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  for (const request of requests) child.stdin.write(`${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
  child.stdin.end();
  assert.equal(await exited, 0);
  return answers;
}

test('a written raw server answers the protocol around its own tools/call branch', async () => {
  const root = await mkdtemp(join(tmpdir(), 'raw-mcp-server-'));
  try {
    const tools = [{ name: 'shout', description: 'Upper-cases the text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];
    const folder = await writeRawPluginFolder(root, 'loud', {
      description: 'Shouts',
      files: { 'note.txt': 'beside\n' },
      server: {
        name: 'loud-server',
        imports: ["import { readFileSync } from 'node:fs';"],
        tools,
        prelude: "const note = readFileSync(new URL('./note.txt', import.meta.url), 'utf8').trim();",
        callTool: "return reply({ content: [{ type: 'text', text: String(message.params.arguments.text).toUpperCase() + ' ' + note }] });",
      },
    });
    assert.deepEqual(JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')), { name: 'loud', version: '1.0.0', description: 'Shouts', main: 'server.mjs' });
    const answers = await converse(join(folder, 'server.mjs'), [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      '',
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'shout', arguments: { text: 'hi' } } },
      { jsonrpc: '2.0', id: 5, method: 'resources/list' },
    ]);
    assert.deepEqual(answers, [
      { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'loud-server', version: '1.0.0' } } },
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 3, result: { tools } },
      { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'HI beside' }] } },
      { jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'method not found' } },
    ]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a raw server importing anything but Node\'s own modules is refused', () => {
  assert.throws(
    () => rawMcpServerSource({ name: 'x', imports: ["import { z } from 'zod';"], tools: [], callTool: 'return reply({});' }),
    /imports Node's own modules only: import \{ z \} from 'zod';/,
  );
  assert.match(rawMcpServerSource({ name: 'x', imports: ["import net from 'node:net';"], tools: [], callTool: 'return reply({});' }), /^import net from 'node:net';$/m);
});
