/**
 * @module cli/bench/two-eras
 * Issue #24, measured through the real `quiver serve` (embedded store, one real plugin): for a
 * 2025-11-25 client at its default (`search`: found tools are bound into the list) and a
 * 2026-07-28 client at its default (the still list), over HTTP (with a key) and over stdio
 * (`quiver serve --stdio`, bridged into the running server):
 * - prompt-cache stability: the `tools/list` bytes before and after each of N searches (a list
 *   that changes rewrites the tools block at the front of the model's prompt, so the provider's
 *   prompt cache behind it is lost);
 * - tokens per turn: the list's tokens at each turn (sent with every turn) and each search
 *   result's tokens (o200k_base);
 * - `search_tools` end-to-end p50/p99 per era and transport (client call to answer).
 * SDK 1.x clients speak 2025; `@modelcontextprotocol/client` pinned to 2026-07-28 speaks 2026.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTokens, TOKENIZER_NAME } from '../../core/tokens.ts';
import { QUIVER_BIN, createMcpKey, percentileMs, withBenchHome, type BenchHome } from './bench-home.ts';
import { writeEchoPlugin } from './replicas.ts';

/** Options of `benchTwoEras`. */
export interface TwoErasOptions {
  /** Searches whose effect on the list is recorded (default 3). */
  searches?: number;
  /** Timed searches per era and transport (default 40). */
  timedSearches?: number;
}

type Era = '2025-11-25' | '2026-07-28';
type Transport = 'http' | 'stdio';

/** One era and transport. */
export interface EraRun {
  era: Era;
  transport: Transport;
  exposure: string;
  /** `tools/list` bytes before the first search, then after each search. */
  listBytes: number[];
  /** True when every list was byte-identical to the first. */
  listStable: boolean;
  /** The list's tokens at each of those turns. */
  listTokensPerTurn: number[];
  /** Tokens of each recorded search's result. */
  searchResultTokens: number[];
  searchP50Ms: number;
  searchP99Ms: number;
  timedSearches: number;
}

/** What the section reports. */
export interface TwoErasBench {
  tokenizer: string;
  plugin: string;
  runs: EraRun[];
  note: string;
}

const QUERIES = ['echo the given text back', 'reverse the letters of a text', 'count the words in a text', 'repeat a message'];

/** What both client lines offer the bench. */
interface BenchClient {
  listTools(): Promise<{ tools: unknown[] }>;
  search(query: string): Promise<string>;
  close(): Promise<void>;
}

function resultText(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content ?? []).map((item) => item.text ?? '').join('');
}

async function legacyClient(transport: Transport, url: string, key: string, env: Record<string, string>): Promise<BenchClient> {
  const client = new Client({ name: 'bench-2025', version: '1.0.0' });
  await client.connect(
    transport === 'http'
      ? new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${key}` } } })
      : new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env, stderr: 'ignore' }),
  );
  return {
    listTools: () => client.listTools(),
    search: async (query) => resultText(await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })),
    close: () => client.close(),
  };
}

async function modernClient(transport: Transport, url: string, key: string, env: Record<string, string>): Promise<BenchClient> {
  const client = new ModernClient({ name: 'bench-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    transport === 'http'
      ? new ModernHttpTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${key}` } } })
      : new ModernStdioTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env, stderr: 'ignore' }),
  );
  return {
    listTools: () => client.listTools() as Promise<{ tools: unknown[] }>,
    search: async (query) => resultText(await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })),
    close: () => client.close(),
  };
}

async function measure(era: Era, transport: Transport, client: BenchClient, searches: number, timed: number): Promise<EraRun> {
  const listBytes: number[] = [];
  const listTokensPerTurn: number[] = [];
  const searchResultTokens: number[] = [];
  const lists: string[] = [];
  const record = async (): Promise<void> => {
    const text = JSON.stringify((await client.listTools()).tools);
    lists.push(text);
    listBytes.push(Buffer.byteLength(text));
    listTokensPerTurn.push(countTokens(text));
  };
  await record();
  for (let index = 0; index < searches; index += 1) {
    searchResultTokens.push(countTokens(await client.search(QUERIES[index % QUERIES.length]!)));
    await record();
  }
  const times: number[] = [];
  for (let index = 0; index < timed; index += 1) {
    const started = performance.now();
    await client.search(QUERIES[index % QUERIES.length]!);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    era,
    transport,
    exposure: era === '2025-11-25' ? 'search (2025 default: found tools bound, list_changed)' : 'still (2026 default)',
    listBytes,
    listStable: lists.every((list) => list === lists[0]),
    listTokensPerTurn,
    searchResultTokens,
    searchP50Ms: percentileMs(times, 50),
    searchP99Ms: percentileMs(times, 99),
    timedSearches: timed,
  };
}

/** Starts `quiver serve --http 127.0.0.1:0` in the home; resolves with its URL once it listens. */
function serve(home: BenchHome): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, 'serve', '--json', '--http', '127.0.0.1:0'], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{') && l.includes('"url"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`quiver serve exited with ${code}: ${err.slice(-400)}`)));
  });
}

/** Runs the four era × transport measurements; see the module comment. */
export async function benchTwoEras(options: TwoErasOptions = {}): Promise<TwoErasBench> {
  const searches = options.searches ?? 3;
  const timed = options.timedSearches ?? 40;
  const parent = mkdtempSync(join(tmpdir(), 'quiver-bench-two-eras-'));
  chmodSync(parent, 0o755); // the sandbox user must reach the plugin folder
  const folder = join(parent, 'bench-echo');
  writeEchoPlugin(folder);
  return withBenchHome([{ source: folder, name: 'bench-echo' }], async (home) => {
    const key = await createMcpKey(home, 'bench-two-eras');
    const served = await serve(home);
    const runs: EraRun[] = [];
    try {
      for (const transport of ['http', 'stdio'] as const) {
        for (const era of ['2025-11-25', '2026-07-28'] as const) {
          const client = era === '2025-11-25' ? await legacyClient(transport, served.url, key, home.env) : await modernClient(transport, served.url, key, home.env);
          try {
            runs.push(await measure(era, transport, client, searches, timed));
          } finally {
            await client.close();
          }
        }
      }
    } finally {
      const exited = new Promise((resolve) => served.child.once('exit', resolve));
      served.child.kill('SIGTERM');
      await exited;
      rmSync(parent, { recursive: true, force: true });
    }
    return {
      tokenizer: TOKENIZER_NAME,
      plugin: 'one dependency-free plugin with 3 tools (bench-echo) behind quiver serve on the embedded store',
      runs,
      note: 'each client is fresh (a 2025 client starts its own session; a 2026 client has none); stdio sessions are bridged into the running server',
    };
  });
}
