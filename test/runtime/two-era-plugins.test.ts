/**
 * Issue #24, the plugin side: the supervisor connects to plugins of either protocol era the
 * spec's `auto` way, with real processes over real stdio (sandboxed where the host can).
 * - A plugin on the v2 SDK that refuses `initialize` (test/fixtures/modern-plugin) is discovered,
 *   listed and called in the 2026-07-28 era; its Multi Round-Trip Requests (elicitation, and
 *   sampling with roots in one round) reach the calling session through the same forwarding as
 *   a 2025 plugin's pushed requests, and the retry carries the plugin's `requestState`.
 * - A legacy plugin that exits on any request before `initialize` is started again as legacy
 *   after the probe, and later connections go straight to `initialize` (the era is remembered).
 * - A plugin offering only a version Quiver does not speak fails with its own -32022 in the error.
 * - The same v2 plugin behind HTTP (legacy requests refused) is reached, called and asks the user.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { isQuiverError } from '../../src/core/errors.ts';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import type { CallerLink, ForwardedRequest } from '../../src/runtime/supervisor/session-routing.ts';
import type { UpstreamSpecInput } from '../../src/runtime/types.ts';
import { writeRawPluginFolder } from '../helpers/raw-mcp-server.ts';
import { firstText, repositoryRoot } from './helpers.ts';

const scratch = mkdtempSync(join(tmpdir(), 'quiver-two-eras-'));
chmodSync(scratch, 0o755);
after(() => rmSync(scratch, { recursive: true, force: true }));

const modernFolder = join(repositoryRoot, 'test/fixtures/modern-plugin');

function modernSpec(pluginId: string): UpstreamSpecInput {
  return {
    pluginId,
    pluginName: pluginId,
    version: '1.0.0',
    trustLevel: 'OFFICIAL',
    transport: 'stdio',
    command: process.execPath,
    args: [join(modernFolder, 'server.mjs')],
    cwd: modernFolder,
    // The fixture imports the v2 SDK from this checkout's node_modules.
    readOnlyPaths: [join(repositoryRoot, 'node_modules')],
  } as UpstreamSpecInput;
}

function make() {
  return createSupervisor({ stopGraceMs: 100, startTimeoutMs: 20_000, defaultTimeoutMs: 20_000 });
}

/** A calling session that answers the plugin's requests and records them. */
function callerAnswering(asked: ForwardedRequest[]): CallerLink {
  return {
    sessionId: `session-${asked.length}-${Math.random()}`,
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
    logLevel: () => undefined,
    async request(request) {
      asked.push(request);
      if (request.method === 'elicitation/create') return { action: 'accept', content: { name: 'Ada' } };
      if (request.method === 'sampling/createMessage') return { role: 'assistant', content: { type: 'text', text: 'a short note' }, model: 'test-model' };
      return { roots: [{ uri: 'file:///work/notes', name: 'notes' }] };
    },
    notify: async () => undefined,
  };
}

describe('plugins of the 2026-07-28 era (issue #24)', () => {
  it('discovers, lists and calls a plugin that refuses initialize', { timeout: 120_000 }, async () => {
    const supervisor = make();
    try {
      const discovery = await supervisor.discover(modernSpec('modern-discovery'));
      assert.deepEqual(discovery.tools.map((tool) => tool.name).sort(), ['draft_note', 'place_order', 'reverse_words']);
      assert.equal(discovery.serverInfo?.name, 'modern-plugin');
      const result = await supervisor.callTool(modernSpec('modern-discovery'), 'reverse_words', { sentence: 'one two three' });
      assert.equal(firstText(result), 'three two one');
    } finally {
      await supervisor.close();
    }
  });

  it("sends a plugin's input requests to the calling session and retries with its requestState", { timeout: 120_000 }, async () => {
    const supervisor = make();
    try {
      const asked: ForwardedRequest[] = [];
      const ordered = await supervisor.callTool(modernSpec('modern-mrtr'), 'place_order', { item: 'tea' }, { caller: callerAnswering(asked) });
      // The plugin checks its own sealed requestState on the retry: this text proves it came back.
      assert.equal(firstText(ordered), 'ordered tea for Ada');
      assert.deepEqual(asked.map((request) => [request.method, request.params?.['message']]), [['elicitation/create', 'Order tea?']]);

      const both: ForwardedRequest[] = [];
      const note = await supervisor.callTool(modernSpec('modern-mrtr'), 'draft_note', { topic: 'bees' }, { caller: callerAnswering(both) });
      assert.equal(firstText(note), 'a short note @ file:///work/notes');
      assert.deepEqual(both.map((request) => request.method).sort(), ['roots/list', 'sampling/createMessage']);
    } finally {
      await supervisor.close();
    }
  });

  it('refuses the input request of a caller that cannot answer it, with the reason', { timeout: 120_000 }, async () => {
    const supervisor = make();
    try {
      // The plugin is told the caller's own capabilities (none), so its SDK refuses to ask (-32021).
      const caller: CallerLink = { ...callerAnswering([]), capabilities: {} };
      await assert.rejects(supervisor.callTool(modernSpec('modern-incapable'), 'place_order', { item: 'tea' }, { caller }), (error: Error) => {
        assert.match(error.message, /Cannot request input 'confirm' \(elicitation\/create\): the request's client capabilities do not declare the required capability/);
        return true;
      });
    } finally {
      await supervisor.close();
    }
  });
});

describe('finding and remembering the era of a legacy plugin (issue #24)', () => {
  it('starts a legacy plugin that exits on the probe again as legacy, and goes straight to initialize afterwards', { timeout: 120_000 }, async () => {
    // A 2025 server that quits on any request before `initialize` (as some SDKs do), counting its starts.
    const folder = await writeRawPluginFolder(scratch, 'strict-legacy', {
      description: 'a legacy server that exits on requests before initialize',
      server: {
        name: 'strict-legacy',
        imports: ["import { appendFileSync } from 'node:fs';"],
        tools: [{ name: 'echo', description: 'Echo the text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
        prelude: `
          appendFileSync(process.env.HOME + '/starts.log', 'start\\n');
          let initialized = false;
          createInterface({ input: process.stdin }).on('line', (line) => {
            const message = JSON.parse(line);
            if (message.method === 'initialize') initialized = true;
            else if (message.id !== undefined && !initialized) process.exit(0);
          });`,
        callTool: `return reply({ content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] });`,
      },
    });
    const stateDir = join(scratch, 'strict-legacy-state');
    const spec = { pluginId: 'strict-legacy', pluginName: 'strict-legacy', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'stdio', command: process.execPath, args: [join(folder, 'server.mjs')], cwd: folder, stateDir } as UpstreamSpecInput;
    const starts = (): number => readFileSync(join(stateDir, 'starts.log'), 'utf8').trim().split('\n').length;
    const supervisor = make();
    try {
      const discovery = await supervisor.discover(spec);
      assert.deepEqual(discovery.tools.map((tool) => tool.name), ['echo']);
      assert.equal(starts(), 2, 'the probe spent the first process; the second spoke 2025');
      assert.equal(firstText(await supervisor.callTool(spec, 'echo', { text: 'hi' })), 'hi');
      assert.equal(starts(), 3, 'the call started it once, straight into initialize');
    } finally {
      await supervisor.close();
    }
  });

  it('probes a legacy plugin that answers the probe once per version, then starts it straight into initialize', { timeout: 120_000 }, async () => {
    // A 2025 server that answers server/discover with -32601 (the shared loop) and logs every request it gets.
    const folder = await writeRawPluginFolder(scratch, 'polite-legacy', {
      description: 'a legacy server that logs the requests it receives',
      server: {
        name: 'polite-legacy',
        imports: ["import { appendFileSync } from 'node:fs';"],
        tools: [{ name: 'echo', description: 'Echo the text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
        prelude: `
          createInterface({ input: process.stdin }).on('line', (line) => {
            const message = JSON.parse(line);
            if (message.id !== undefined) appendFileSync(process.env.HOME + '/requests.log', message.method + '\\n');
          });`,
        callTool: `return reply({ content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] });`,
      },
    });
    const stateDir = join(scratch, 'polite-legacy-state');
    const spec = { pluginId: 'polite-legacy', pluginName: 'polite-legacy', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'stdio', command: process.execPath, args: [join(folder, 'server.mjs')], cwd: folder, stateDir } as UpstreamSpecInput;
    const requests = (): string[] => readFileSync(join(stateDir, 'requests.log'), 'utf8').trim().split('\n');
    const supervisor = make();
    try {
      await supervisor.discover(spec);
      assert.deepEqual(requests(), ['server/discover', 'initialize', 'tools/list']);
      assert.equal(firstText(await supervisor.callTool(spec, 'echo', { text: 'hi' })), 'hi');
      assert.equal(requests().filter((method) => method === 'server/discover').length, 1, `the second process was not probed: ${requests().join(', ')}`);
      assert.equal(requests().filter((method) => method === 'initialize').length, 2);
    } finally {
      await supervisor.close();
    }
  });

  it("names the plugin's own -32022 and supported versions when it speaks none Quiver does", { timeout: 60_000 }, async () => {
    const folder = await writeRawPluginFolder(scratch, 'future-only', {
      description: 'a server of a revision Quiver does not speak',
      server: {
        name: 'future-only',
        prelude: `
          createInterface({ input: process.stdin }).on('line', (line) => {
            const message = JSON.parse(line);
            if (message.id === undefined) return;
            send({ jsonrpc: '2.0', id: message.id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2099-01-01'], requested: 'x' } } });
            process.exitCode = 0;
          });`,
        tools: [],
        callTool: 'return reply({ content: [] });',
      },
    });
    const spec = { pluginId: 'future-only', pluginName: 'future-only', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'stdio', command: process.execPath, args: [join(folder, 'server.mjs')], cwd: folder } as UpstreamSpecInput;
    const supervisor = make();
    try {
      await assert.rejects(supervisor.discover(spec), (error: Error) => {
        assert.ok(isQuiverError(error));
        assert.match(error.message, /Unsupported protocol version \(supported: 2099-01-01\)/);
        assert.doesNotMatch(error.message, /exited with code/);
        return true;
      });
    } finally {
      await supervisor.close();
    }
  });
});

describe('a remote plugin of the 2026-07-28 era over HTTP (issue #24)', () => {
  it('is reached in the modern era, listed, called, and its input requests forwarded', { timeout: 120_000 }, async () => {
    // The same fixture behind the v2 SDK's HTTP handler, legacy requests refused (-32022).
    const { createServer } = (await import(pathToFileURL(join(modernFolder, 'server.mjs')).href)) as { createServer: () => never };
    const handler = createMcpHandler(createServer, { legacy: 'reject' });
    const server = createHttpServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        void handler.fetch(new Request(`http://127.0.0.1${incoming.url}`, { method: incoming.method, headers, ...(body && incoming.method !== 'GET' ? { body } : {}) })).then(async (response) => {
          response.headers.forEach((value, name) => outgoing.setHeader(name, value));
          outgoing.writeHead(response.status);
          const reader = response.body?.getReader();
          for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) outgoing.write(read.value);
          outgoing.end();
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const spec = { pluginId: 'modern-http', pluginName: 'modern-http', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'http', url } as UpstreamSpecInput;
    const supervisor = make();
    try {
      const discovery = await supervisor.discover(spec);
      assert.deepEqual(discovery.tools.map((tool) => tool.name).sort(), ['draft_note', 'place_order', 'reverse_words']);
      assert.equal(firstText(await supervisor.callTool(spec, 'reverse_words', { sentence: 'over http' })), 'http over');
      const asked: ForwardedRequest[] = [];
      assert.equal(firstText(await supervisor.callTool(spec, 'place_order', { item: 'jam' }, { caller: callerAnswering(asked) })), 'ordered jam for Ada');
      assert.deepEqual(asked.map((request) => request.method), ['elicitation/create']);
    } finally {
      await supervisor.close();
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
