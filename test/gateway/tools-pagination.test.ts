/**
 * Issue #24: `tools/list` paginates with a cursor for both eras, on the in-process HTTP gateway
 * with real fixture MCP servers and a page of 2 tools. An SDK 1.x client (2025-11-25) and a v2
 * client pinned to 2026-07-28 walk the pages: together they are exactly the unpaged list, in
 * the same order, each name once; a made-up or altered cursor is -32602.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { identity, startHttpHarness, type HttpHarness } from './helpers.ts';

const everything = identity({ exposureMode: 'all' });

describe('tools/list pages (issue #24)', { timeout: 120_000 }, () => {
  let paged: HttpHarness;
  let whole: HttpHarness;
  before(async () => {
    paged = await startHttpHarness({ gateway: { toolsPageSize: 2 } });
    whole = await startHttpHarness();
  });
  after(async () => {
    await paged.close();
    await whole.close();
  });

  /** Every page of a client's list, in order. */
  async function walk(list: (cursor?: string) => Promise<{ tools: Array<{ name: string }>; nextCursor?: string | undefined }>): Promise<{ names: string[]; pages: number }> {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await list(cursor);
      pages += 1;
      assert.ok(page.tools.length <= 2, `a page holds at most 2 tools, got ${page.tools.length}`);
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages < 100);
    return { names, pages };
  }

  it('a 2025-11-25 client: the pages make up the unpaged list; a bad cursor is -32602', async () => {
    const reference = await whole.connect(everything);
    const client = await paged.connect(everything);
    try {
      const expected = (await reference.client.listTools()).tools.map((tool) => tool.name);
      assert.ok(expected.length > 4, `enough tools to page: ${expected.length}`);
      const { names, pages } = await walk((cursor) => client.client.listTools(cursor === undefined ? {} : { cursor }));
      assert.deepEqual(names, expected);
      assert.equal(pages, Math.ceil(expected.length / 2));
      await assert.rejects(client.client.listTools({ cursor: 'bogus' }), (error: { code?: number }) => error.code === -32602);
      const first = await client.client.listTools();
      const { f } = JSON.parse(Buffer.from(String(first.nextCursor), 'base64url').toString()) as { f: string };
      const pastTheEnd = Buffer.from(JSON.stringify({ o: expected.length + 2, f })).toString('base64url');
      await assert.rejects(client.client.listTools({ cursor: pastTheEnd }), /past the end/);
      const forged = Buffer.from(JSON.stringify({ o: 2, f: 'not-the-list' })).toString('base64url');
      await assert.rejects(client.client.listTools({ cursor: forged }), /the list changed/);
    } finally {
      await reference.close();
      await client.close();
    }
  });

  it('a pinned 2026-07-28 client: its SDK walks the pages to the whole list, in a deterministic order; a bad cursor is -32602', async () => {
    const client = new ModernClient({ name: 'pages', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttpTransport(paged.url, { requestInit: { headers: { 'x-test-identity': JSON.stringify(everything) } } }));
    const reference = await whole.connect(everything);
    try {
      // Without a cursor the v2 client follows nextCursor itself and returns every page's tools.
      const once = (await client.listTools(undefined, { cacheMode: 'refresh' } as never)).tools.map((tool) => tool.name);
      const twice = (await client.listTools(undefined, { cacheMode: 'refresh' } as never)).tools.map((tool) => tool.name);
      assert.deepEqual(twice, once, 'the same order every time');
      assert.deepEqual([...once].sort(), (await reference.client.listTools()).tools.map((tool) => tool.name).sort());
      assert.equal(new Set(once).size, once.length, 'each tool once');
      await assert.rejects(client.listTools({ cursor: 'bogus' }, { cacheMode: 'refresh' } as never), (error: { code?: number }) => error.code === -32602);
    } finally {
      await client.close();
      await reference.close();
    }
  });
});
