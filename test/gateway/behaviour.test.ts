/**
 * Session behaviours of the gateway through a real MCP client and real servers: bounded tool
 * context, loop guard (evict after the call, guidance, re-admission by search), redundant
 * searches, marketplace fallback, exposure modes, catalog changes, idle collection and a
 * client leaving in the middle of a call.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { allText, firstText, fixturePlugin, standardPlugins, startHttpHarness, type HttpHarness } from './helpers.ts';

async function search(client: Client, query: string, limit = 5) {
  return JSON.parse(firstText(await client.callTool({ name: 'search_tools', arguments: { query, limit } }))) as {
    tools: Array<{ name: string; inputSchema?: unknown }>;
    alreadyAvailable?: Array<{ name: string; inputSchema?: unknown }>;
    note?: string;
    evicted?: string[];
    marketplace?: Array<{ name: string }>;
    session: { boundTools: number; toolTokens: number; capacity: number };
  };
}
const listed = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

/** Waits (up to 30 s) until the fixture plugin's marker file holds `line`. */
async function untilMarked(marker: string, line: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(existsSync(marker) && readFileSync(marker, 'utf8').includes(line))) {
    if (Date.now() > deadline) assert.fail(`the plugin never wrote '${line}'`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('search mode session behaviour', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness({
      gateway: {
        toolContext: { capacity: 3 },
        guard: { maxCallsInWindow: 3, guidance: { util__fetch_url: 'If the page is empty, search for a headless browser tool.' }, exemptTools: ['util__count'] },
      },
    });
  });
  after(async () => {
    await harness.close();
  });

  test('the tool context is bounded: older discoveries are evicted and announced', async () => {
    const { client, listChanged, close } = await harness.connect();
    await search(client, 'invoice', 3);
    await listChanged.waitFor(1);
    assert.deepEqual((await listed(client)).filter((name) => name.startsWith('billing__')).length, 3);
    const second = await search(client, 'send an email message', 1);
    assert.deepEqual(second.tools.map((tool) => tool.name), ['mail__send_email']);
    assert.equal(second.evicted?.length, 1);
    assert.equal(second.session.capacity, 3);
    await listChanged.waitFor(2);
    const names = await listed(client);
    assert.ok(names.includes('mail__send_email'));
    assert.ok(names.includes('memory__remember'), 'always-include tools are never evicted');
    assert.equal(names.filter((name) => name.includes('__')).length, 4);
    await close();
  });

  test('a looping tool still runs, then is evicted with guidance; a new search re-admits it', async () => {
    const { client, listChanged, close } = await harness.connect();
    await search(client, 'fetch a web page by URL', 1);
    const results = [];
    for (const url of ['https://example.com/a', 'https://example.com/a/', 'https://EXAMPLE.com/a#top', 'https://example.com/a']) {
      results.push(await client.callTool({ name: 'util__fetch_url', arguments: { url } }));
    }
    assert.ok(results.slice(0, 3).every((result) => !/Loop detected/.test(allText(result))));
    const looped = allText(results[3]);
    assert.match(looped, /^page at https:\/\/example.com\/a: \(empty\)/, 'the call ran and its result is intact');
    assert.match(looped, /Loop detected: 'util__fetch_url' was called 4 times/);
    assert.match(looped, /headless browser/, 'tool-specific guidance');
    await listChanged.waitFor(2);
    assert.ok(!(await listed(client)).includes('util__fetch_url'));
    await assert.rejects(client.callTool({ name: 'util__fetch_url', arguments: { url: 'https://example.com/a' } }), (error: McpError) => error.code === ErrorCode.InvalidParams && /repeated identical calls/.test(error.message));
    await search(client, 'fetch a web page by URL', 1);
    const again = await client.callTool({ name: 'util__fetch_url', arguments: { url: 'https://example.com/a' } });
    assert.doesNotMatch(allText(again), /Loop detected/, 're-discovery resets the counter');
    await close();
  });

  test('a tool bound by call_tool without a search is loop-guarded as usual, and call_tool then refuses it (issue #12)', async () => {
    const { client, close } = await harness.connect();
    const call = () => client.callTool({ name: 'call_tool', arguments: { name: 'util__fetch_url', arguments: { url: 'https://example.com/a' } } });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await call());
    assert.ok(results.slice(0, 3).every((result) => !/Loop detected/.test(allText(result))));
    assert.match(allText(results[3]), /Loop detected: 'util__fetch_url' was called 4 times/);
    await assert.rejects(call(), (error: McpError) => error.code === ErrorCode.InvalidParams && /repeated identical calls/.test(error.message));
    await close();
  });

  test('the sliding window catches A→B→A→B loops; exempt tools never trip the guard', async () => {
    const { client, close } = await harness.connect();
    await search(client, 'echo add numbers sum', 3);
    const texts: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      texts.push(allText(await client.callTool({ name: 'util__echo', arguments: { message: 'same' } })));
      if (i < 3) texts.push(allText(await client.callTool({ name: 'util__add', arguments: { a: 1, b: 2 } })));
    }
    assert.ok(texts.some((text) => /Loop detected/.test(text)));
    await search(client, 'increment counter', 1);
    for (let i = 0; i < 8; i += 1) assert.doesNotMatch(allText(await client.callTool({ name: 'util__count', arguments: {} })), /Loop detected/);
    await close();
  });

  test('an always-include tool that loops is suspended until the next search', async () => {
    const { client, close } = await harness.connect();
    let last = '';
    for (let i = 0; i < 4; i += 1) last = allText(await client.callTool({ name: 'memory__remember', arguments: { key: 'k' } }));
    assert.match(last, /Loop detected/);
    assert.ok(!(await listed(client)).includes('memory__remember'));
    await search(client, 'anything about invoices', 1);
    assert.ok((await listed(client)).includes('memory__remember'));
    await close();
  });

  test('a near-identical repeated search gets a note instead of the same schemas', async () => {
    const { client, close } = await harness.connect();
    const first = await search(client, 'create invoice', 2);
    assert.equal(first.note, undefined);
    assert.ok(first.tools.every((tool) => tool.inputSchema));
    const second = await search(client, 'create an invoice please', 2);
    assert.match(second.note ?? '', /already in your tool list/);
    assert.deepEqual(second.tools, []);
    assert.deepEqual(second.alreadyAvailable?.map((tool) => tool.name).sort(), first.tools.map((tool) => tool.name).sort());
    assert.ok(second.alreadyAvailable?.every((tool) => tool.inputSchema === undefined));
    await close();
  });

  test('when nothing installed fits, installable plugins are suggested', async () => {
    const { client, close } = await harness.connect();
    const found = await search(client, 'extract tables from a PDF document', 3);
    assert.deepEqual(found.tools, []);
    assert.deepEqual(found.marketplace?.map((entry) => entry.name), ['pdf-tools']);
    assert.match(found.note ?? '', /ask the user whether to install/);
    await close();
  });

  test('each search outcome is recorded when the next search starts', async () => {
    const { client, close } = await harness.connect();
    await search(client, 'refund a payment', 1);
    const firstEvent = harness.backend.searches.at(-1)!.eventId;
    await client.callTool({ name: 'billing__refund_payment', arguments: { payment: 'p' } });
    await search(client, 'send email', 1);
    const secondEvent = harness.backend.searches.at(-1)!.eventId;
    assert.deepEqual(harness.backend.outcomes.find((o) => o.eventId === firstEvent), { eventId: firstEvent, toolsCalled: ['billing__refund_payment'], success: true });
    await close();
    assert.deepEqual(harness.backend.outcomes.find((o) => o.eventId === secondEvent), { eventId: secondEvent, toolsCalled: [], success: false });
  });
});

describe('exposure modes and catalog changes', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness();
  });
  after(async () => {
    await harness.close();
  });

  test('capabilities mode: list_capabilities then load_capability (seed 002)', async () => {
    const { client, listChanged, close } = await harness.connect({ exposureMode: 'capabilities' });
    assert.deepEqual((await listed(client)).sort(), ['call_tool', 'list_capabilities', 'load_capability', 'memory__remember']);
    const capabilities = JSON.parse(firstText(await client.callTool({ name: 'list_capabilities', arguments: {} }))) as { capabilities: Array<{ name: string; toolCount: number }> };
    assert.deepEqual(capabilities.capabilities.map((c) => c.name).sort(), ['billing', 'mail', 'memory', 'util']);
    const loaded = JSON.parse(firstText(await client.callTool({ name: 'load_capability', arguments: { name: 'billing' } }))) as { tools: unknown[] };
    assert.equal(loaded.tools.length, 3);
    await listChanged.waitFor(1);
    assert.ok((await listed(client)).includes('billing__refund_payment'));
    assert.equal(firstText(await client.callTool({ name: 'billing__refund_payment', arguments: { payment: 'x' } })), 'refunded x');
    await assert.rejects(client.callTool({ name: 'load_capability', arguments: { name: 'globex' } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.callTool({ name: 'load_capability', arguments: { name: 'audit' } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.callTool({ name: 'search_tools', arguments: { query: 'x' } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await close();
  });

  test('all mode lists every enabled tool the identity may see, and no meta-tools', async () => {
    const { client, close } = await harness.connect({ exposureMode: 'all' });
    const names = await listed(client);
    assert.equal(names.length, 13);
    assert.ok(!names.includes('search_tools'));
    assert.ok(!names.some((name) => name.startsWith('globex__') || name.startsWith('audit__')));
    assert.equal(firstText(await client.callTool({ name: 'mail__send_email', arguments: { to: 'a@b.c', subject: 'hi' } })), 'email sent to a@b.c');
    await close();
  });

  test('a catalog change refreshes the search description and announces list_changed', async () => {
    const { client, listChanged, close } = await harness.connect();
    const before = (await client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description!;
    assert.doesNotMatch(before, /Weather/);
    await harness.backend.addPlugin(fixturePlugin('weather', ['echo'], { manifest: { title: 'Weather', category: 'data' } }));
    await listChanged.waitFor(1);
    const after = (await client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description!;
    assert.match(after, /Weather \(1 tool, data\)/);
    await harness.backend.removePlugin('weather');
    await listChanged.waitFor(2);
    await close();
  });
});

describe('session lifecycle', () => {
  test('idle sessions are collected; a client leaving mid-call leaks nothing', async () => {
    let now = 1_000_000;
    const marker = join(mkdtempSync(join(tmpdir(), 'quiver-marker-')), 'marker.txt');
    const plugins = [...standardPlugins().filter((p) => p.name !== 'util'), fixturePlugin('util', ['echo', 'slow'], { serverArgs: ['--marker', marker] })];
    const harness = await startHttpHarness({ plugins, clock: () => now, gateway: { sessions: { idleTtlMs: 60_000, sweepIntervalMs: 0 } } });
    try {
      const leaving = await harness.connect();
      await search(leaving.client, 'wait milliseconds slow', 1);
      const pending = leaving.client.callTool({ name: 'util__slow', arguments: { ms: 1_000 } }).catch((error: Error) => error);
      await untilMarked(marker, 'started'); // the plugin has the call (a fixed wait could end before, on a loaded machine)
      await leaving.client.close(); // the client goes away without DELETE
      assert.ok((await pending) instanceof Error);
      const other = await harness.connect();
      assert.ok((await listed(other.client)).includes('search_tools'), 'the gateway keeps serving');
      // The abandoned call still runs to its end upstream: wait for the plugin to say so.
      const deadline = Date.now() + 5_000;
      while (!(existsSync(marker) && readFileSync(marker, 'utf8').includes('finished')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.ok(existsSync(marker) && readFileSync(marker, 'utf8').includes('finished'));
      assert.equal(harness.gateway.sessionCount, 2);
      now += 61_000;
      await harness.gateway.touchSession((other.transport as { sessionId?: string }).sessionId!);
      assert.equal(await harness.gateway.sweep(), 1, 'only the abandoned session was idle');
      assert.equal(harness.handler.sessionCount, 1);
      assert.ok((await listed(other.client)).length > 0);
      await other.close();
      assert.equal(harness.gateway.sessionCount, 0);
    } finally {
      await harness.close();
    }
  });

  test('cancelling a call aborts it upstream', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'quiver-marker-')), 'marker.txt');
    const harness = await startHttpHarness({ plugins: [fixturePlugin('util', ['slow'], { serverArgs: ['--marker', marker] })] });
    try {
      const { client, close } = await harness.connect();
      await search(client, 'slow wait', 1);
      const controller = new AbortController();
      const pending = client.callTool({ name: 'util__slow', arguments: { ms: 5000 } }, undefined, { signal: controller.signal }).catch((error: Error) => error);
      await untilMarked(marker, 'started'); // the plugin has the call: a cancel before that has nothing upstream to abort
      controller.abort();
      assert.ok((await pending) instanceof Error);
      const deadline = Date.now() + 3000;
      while (!(existsSync(marker) && readFileSync(marker, 'utf8').includes('cancelled')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.match(readFileSync(marker, 'utf8'), /cancelled/);
      await close();
    } finally {
      await harness.close();
    }
  });
});
