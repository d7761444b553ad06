/**
 * The gateway as a real process over stdio: the MCP SDK client, and a third-party client
 * (the MCP Inspector CLI) listing and calling tools through it; the official reference
 * server (server-everything) as an upstream; and a client vanishing mid-call.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { allText, connectStdio, everythingPlugin, firstText, fixturePlugin, gatewayStdioScript, marketplace, repoRoot, standardPlugins, writeGatewayConfig, type TestClient } from './helpers.ts';

const run = promisify(execFile);
const inspector = join(repoRoot, 'node_modules/@modelcontextprotocol/inspector-cli/build/index.js');
// inspector-cli 1.0.3 looks for its package.json relative to the working directory, so it
// must run from its build folder (tsx is still found up the tree from there).
const inspectorCwd = join(repoRoot, 'node_modules/@modelcontextprotocol/inspector-cli/build');

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map((line) => Number(line.trim())).filter((n) => n > 0);
  } catch {
    return [];
  }
}
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('gateway over stdio (a real process)', () => {
  let config: string;
  let session: TestClient;
  before(async () => {
    config = writeGatewayConfig({ plugins: [...standardPlugins(), everythingPlugin()], marketplace });
    session = await connectStdio(config, ['--org', 'acme']);
  });
  after(async () => {
    await session.close();
  });

  test('search → list_changed → call → result with the SDK client', async () => {
    const { client, listChanged } = session;
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['call_tool', 'memory__remember', 'search_tools']);
    const found = JSON.parse(firstText(await client.callTool({ name: 'search_tools', arguments: { query: 'sum of two numbers', limit: 3 } }))) as { tools: Array<{ name: string }> };
    assert.ok(found.tools.some((tool) => tool.name === 'everything__get-sum'));
    await listChanged.waitFor(1);
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'everything__get-sum'));
    const sum = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 40 } });
    assert.match(allText(sum), /42/);
  });

  test('resources of the reference server come through namespaced', async () => {
    const { resources } = await session.client.listResources();
    const architecture = resources.find((resource) => resource.name === 'architecture.md');
    assert.ok(architecture);
    assert.ok(architecture.uri.startsWith('quiver://everything/'));
    const read = await session.client.readResource({ uri: architecture.uri });
    assert.ok(((read.contents[0] as { text?: string }).text ?? '').length > 10);
  });

  test('the MCP Inspector CLI lists and calls tools through the gateway', async () => {
    // Each Inspector run starts a fresh gateway process: keep its plugin set small.
    const config = writeGatewayConfig({ plugins: [everythingPlugin(), fixturePlugin('util', ['echo'])] });
    // The Inspector CLI takes `<command> [its options] -- <the command's own arguments>`.
    const target = ['--', '--import', 'tsx', gatewayStdioScript, '--config', config];
    const list = await run(process.execPath, [inspector, process.execPath, '--method', 'tools/list', ...target], { cwd: inspectorCwd, timeout: 60_000 });
    const tools = (JSON.parse(list.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    assert.ok(tools.includes('search_tools'));
    const searched = await run(process.execPath, [inspector, process.execPath, '--method', 'tools/call', '--tool-name', 'search_tools', '--tool-arg', 'query=echo back a message', ...target], { cwd: inspectorCwd, timeout: 60_000 });
    assert.match(searched.stdout, /util__echo|everything__echo/);
    const all = [...target, '--exposure', 'all'];
    const called = await run(process.execPath, [inspector, process.execPath, '--method', 'tools/call', '--tool-name', 'everything__echo', '--tool-arg', 'message=through quiver', ...all], { cwd: inspectorCwd, timeout: 60_000 });
    assert.match(called.stdout, /Echo: through quiver/);
    const unknown = await run(process.execPath, [inspector, process.execPath, '--method', 'tools/call', '--tool-name', 'nope__x', ...all], { cwd: inspectorCwd, timeout: 60_000 }).catch((error: { stdout: string; stderr: string; code: number }) => error);
    assert.match(`${unknown.stdout}${unknown.stderr}`, /Unknown tool: nope__x/);
  });
});

describe('a stdio client vanishing mid-call', () => {
  test('the gateway cancels the call upstream, closes its plugins and exits', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'quiver-marker-')), 'marker.txt');
    const config = writeGatewayConfig({ plugins: [fixturePlugin('util', ['slow', 'echo'], { serverArgs: ['--marker', marker] })] });
    const session = await connectStdio(config, ['--exposure', 'all']);
    const gatewayPid = (session.transport as { pid: number | null }).pid!;
    assert.equal(firstText(await session.client.callTool({ name: 'util__echo', arguments: { message: 'x' } })), 'echo: x');
    const plugins = childPids(gatewayPid);
    assert.ok(plugins.length >= 1);
    const pending = session.client.callTool({ name: 'util__slow', arguments: { ms: 10_000 } }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await session.close(); // closes the gateway's stdin
    assert.ok((await pending) instanceof Error);
    const deadline = Date.now() + 8000;
    while ((alive(gatewayPid) || plugins.some(alive)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(alive(gatewayPid), false, 'the gateway process exited');
    assert.deepEqual(plugins.filter(alive), [], 'no orphaned plugin process');
    assert.ok(!existsSync(marker) || !readFileSync(marker, 'utf8').includes('finished'));
  });
});
