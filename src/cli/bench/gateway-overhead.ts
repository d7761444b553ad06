/**
 * @module cli/bench/gateway-overhead
 * Gateway benchmarks for `quiver bench --json` (DESIGN §6):
 * - `benchGatewayOverhead`: p50/p99 of `tools/call` through the gateway (MCP client → stdio →
 *   gateway process → stdio → upstream server) vs. a direct MCP client to the same kind of
 *   upstream server, interleaved so machine noise hits both alike. Target: ≤ 1 ms added at p50.
 * - `benchSessionTokens`: tool-schema tokens a session carries in `search` mode vs `all` mode
 *   on a catalog of ≥ 150 real tools served by real MCP servers.
 * Both run on THE TEST BACKEND (`test/helpers/gateway-backend/local-backend.ts`) and real processes.
 * That backend lives in the checkout's test/ folder, never built nor packed (issue #28), so these
 * benchmarks run from a source checkout only: it is loaded through tsx, a devDependency there.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import { percentile } from '../../core/stats.ts';
import { countTokens, TOKENIZER_NAME } from '../../core/tokens.ts';
import { createGateway } from '../../gateway/gateway.ts';
import { toolDefinitionTokens } from '../../gateway/meta-tools.ts';
import type { GatewayBackend } from '../../gateway/backend.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = join(here, '../../../');
const testBackendDir = join(repoRoot, 'test/helpers/gateway-backend');

/** The part of a test-backend plugin spec these benchmarks set (LocalPluginSpec there). */
interface BenchPluginSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  manifest?: { title?: string; category?: string };
}

/** What these benchmarks use of the test backend module. */
interface TestBackendModule {
  createLocalTestBackend(options: { plugins: BenchPluginSpec[] }): Promise<GatewayBackend & { readonly warnings: readonly string[]; close(): Promise<void> }>;
}

/** Fails with the reason when the test backend is not here (an installed package has no test/). */
function requireCheckout(): void {
  if (!existsSync(join(testBackendDir, 'local-backend.ts'))) {
    throw new QuiverError(ErrorCodes.unavailable, `the gateway benchmarks run from a source checkout: ${testBackendDir} is not part of the published package`);
  }
}

/** Node arguments that run a test-backend script through tsx. */
function script(name: string): string[] {
  requireCheckout();
  return ['--import', 'tsx', join(testBackendDir, `${name}.ts`)];
}

/** Loads the test backend through tsx's API (so a compiled build in a checkout can run it too). */
async function loadTestBackend(): Promise<TestBackendModule> {
  requireCheckout();
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(pathToFileURL(join(testBackendDir, 'local-backend.ts')).href, import.meta.url)) as TestBackendModule;
}

/** The p-th percentile (0–100) of sorted milliseconds, nearest rank (core/stats); NaN when empty. */
const percentileMs = (sorted: readonly number[], p: number): number => percentile(sorted, p / 100) ?? Number.NaN;
const round = (value: number) => Math.round(value * 1000) / 1000;

/** Result of the overhead benchmark (milliseconds). */
export interface GatewayOverheadResult {
  iterations: number;
  directP50Ms: number;
  directP99Ms: number;
  gatewayP50Ms: number;
  gatewayP99Ms: number;
  addedP50Ms: number;
  addedP99Ms: number;
  setup: string;
}

/**
 * Times `iterations` calls of each path, interleaved (alternating which goes first so neither
 * always runs on a warmer machine), after `warmup` untimed rounds; returns p50/p99 of both.
 */
export async function compareCallPaths(
  direct: () => Promise<unknown>,
  gateway: () => Promise<unknown>,
  options: { iterations: number; warmup: number; setup: string },
): Promise<GatewayOverheadResult> {
  for (let i = 0; i < options.warmup; i++) {
    await direct();
    await gateway();
  }
  const directTimes: number[] = [];
  const gatewayTimes: number[] = [];
  const time = async (call: () => Promise<unknown>, into: number[]) => {
    const started = performance.now();
    await call();
    into.push(performance.now() - started);
  };
  for (let i = 0; i < options.iterations; i += 1) {
    if (i % 2 === 0) {
      await time(direct, directTimes);
      await time(gateway, gatewayTimes);
    } else {
      await time(gateway, gatewayTimes);
      await time(direct, directTimes);
    }
  }
  directTimes.sort((a, b) => a - b);
  gatewayTimes.sort((a, b) => a - b);
  const directP50 = percentileMs(directTimes, 50);
  const gatewayP50 = percentileMs(gatewayTimes, 50);
  return {
    iterations: options.iterations,
    directP50Ms: round(directP50),
    directP99Ms: round(percentileMs(directTimes, 99)),
    gatewayP50Ms: round(gatewayP50),
    gatewayP99Ms: round(percentileMs(gatewayTimes, 99)),
    addedP50Ms: round(gatewayP50 - directP50),
    addedP99Ms: round(percentileMs(gatewayTimes, 99) - percentileMs(directTimes, 99)),
    setup: options.setup,
  };
}

/** Measures what the gateway adds to a `tools/call` (N interleaved calls each way). */
export async function benchGatewayOverhead(options: { iterations?: number; warmup?: number } = {}): Promise<GatewayOverheadResult> {
  const iterations = options.iterations ?? 300;
  const warmup = options.warmup ?? 30;
  const directory = mkdtempSync(join(tmpdir(), 'quiver-bench-'));
  const catalogFile = join(directory, 'catalog.json');
  writeFileSync(
    catalogFile,
    JSON.stringify({ name: 'bench', tools: [{ name: 'echo', description: 'Echoes its arguments.', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } }] }),
  );
  const upstream: BenchPluginSpec = { name: 'bench', command: process.execPath, args: [...script('catalog-server'), '--json', catalogFile], cwd: repoRoot };
  const configFile = join(directory, 'gateway.json');
  writeFileSync(configFile, JSON.stringify({ plugins: [upstream] }));

  const direct = new Client({ name: 'bench-direct', version: '1' });
  const viaGateway = new Client({ name: 'bench-gateway', version: '1' });
  try {
    await direct.connect(new StdioClientTransport({ command: upstream.command, args: upstream.args, cwd: repoRoot, stderr: 'ignore' }));
    await viaGateway.connect(
      new StdioClientTransport({ command: process.execPath, args: [...script('gateway-process'), '--config', configFile, '--exposure', 'all'], cwd: repoRoot, stderr: 'ignore' }),
    );
    const callDirect = () => direct.callTool({ name: 'echo', arguments: { message: 'ping' } });
    const callGateway = () => viaGateway.callTool({ name: 'bench__echo', arguments: { message: 'ping' } });
    return await compareCallPaths(callDirect, callGateway, {
      iterations,
      warmup,
      setup: 'SDK client -> stdio -> gateway process (exposure all, test backend) -> stdio -> catalog-server echo; vs SDK client -> stdio -> catalog-server echo',
    });
  } finally {
    await Promise.allSettled([direct.close(), viaGateway.close()]);
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Result of the session-token benchmark. */
export interface SessionTokensResult {
  tokenizer: string;
  catalog: { tools: number; plugins: number; source: string; warnings: string[] };
  allModeTokens: number;
  searchMode: {
    initialTokens: number;
    afterEachSearchTokens: number[];
    searchResultTokens: number[];
    limit: number;
  };
  /** 1 − (search-mode tool list after the searches / all-mode tool list). */
  savedFraction: number;
  /** The same, counting the search results' text as context too. */
  savedFractionWithSearchResults: number;
}

/**
 * Tool tokens per session, `search` vs `all`, on ≥ 150 real tools: 160 Seal-Tools tools served
 * by four catalog servers, plus the MCP reference server (server-everything) when installed.
 */
export async function benchSessionTokens(options: { catalogFile?: string; queries?: string[]; limit?: number } = {}): Promise<SessionTokensResult> {
  const catalogFile = options.catalogFile ?? join(repoRoot, 'test/fixtures/gateway/seal-tools-160.jsonl');
  const limit = options.limit ?? 5;
  const queries = options.queries ?? ['analyze chemical evidence from a crime scene', 'calculate the structural load of a bridge', 'schedule a maintenance inspection'];
  const catalogServer = script('catalog-server');
  const plugins: BenchPluginSpec[] = [0, 1, 2, 3].map((part) => ({
    name: `seal-${part + 1}`,
    command: process.execPath,
    args: [...catalogServer, '--jsonl', catalogFile, '--offset', String(part * 40), '--count', '40', '--name', `seal-${part + 1}`],
    cwd: repoRoot,
    manifest: { title: `Seal-Tools part ${part + 1}`, category: 'data' },
  }));
  const everything = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  plugins.push({ name: 'everything', command: process.execPath, args: [everything, 'stdio'], cwd: repoRoot, manifest: { title: 'Everything demo', category: 'core' } });
  const { createLocalTestBackend } = await loadTestBackend();
  const backend = await createLocalTestBackend({ plugins });
  const gateway = createGateway({ backend, options: { sessions: { sweepIntervalMs: 0 } } });
  const identity = { workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null };
  const connect = async (exposureMode: 'all' | 'search') => {
    const session = await gateway.openSession({ ...identity, exposureMode });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await session.connect(serverSide);
    const client = new Client({ name: `bench-${exposureMode}`, version: '1' });
    await client.connect(clientSide);
    return client;
  };
  const listTokens = async (client: Client) => (await client.listTools()).tools.reduce((sum, tool) => sum + toolDefinitionTokens(tool), 0);
  try {
    const all = await connect('all');
    const allModeTokens = await listTokens(all);
    const catalogTools = (await all.listTools()).tools.length;
    const search = await connect('search');
    const initialTokens = await listTokens(search);
    const afterEachSearchTokens: number[] = [];
    const searchResultTokens: number[] = [];
    for (const query of queries) {
      const result = await search.callTool({ name: 'search_tools', arguments: { query, limit } });
      const text = ((result.content as Array<{ type: string; text?: string }>)[0]?.text) ?? '';
      searchResultTokens.push(countTokens(text));
      afterEachSearchTokens.push(await listTokens(search));
    }
    const steady = afterEachSearchTokens.at(-1) ?? initialTokens;
    const withResults = steady + searchResultTokens.reduce((sum, tokens) => sum + tokens, 0);
    return {
      tokenizer: TOKENIZER_NAME,
      catalog: { tools: catalogTools, plugins: plugins.length, source: `Seal-Tools (160 tools, ${catalogFile}) + server-everything`, warnings: [...backend.warnings] },
      allModeTokens,
      searchMode: { initialTokens, afterEachSearchTokens, searchResultTokens, limit },
      savedFraction: round(1 - steady / allModeTokens),
      savedFractionWithSearchResults: round(1 - withResults / allModeTokens),
    };
  } finally {
    await gateway.close();
    await backend.close();
  }
}
