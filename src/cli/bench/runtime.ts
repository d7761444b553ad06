/**
 * @module cli/bench/runtime
 * Runtime benchmarks for `quiver bench --json` (DESIGN §6): the process bound under load and
 * the latency the supervisor adds to `tools/call`. Both start real MCP servers (a tiny echo
 * server evaluated by `node -e`, resolved against Quiver's own node_modules) and return
 * measured numbers only.
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { percentile } from '../../core/stats.ts';
import { processesWithEnv } from '../../runtime/process-tree.ts';
import { supervisorMarkerName } from '../../runtime/sandbox-identity.ts';
import { createSupervisor } from '../../runtime/supervisor.ts';
import type { TrustLevel, UpstreamSpecInput } from '../../runtime/types.ts';

const packageRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** A minimal MCP server with one `echo` tool, run with `node --input-type=module -e`. */
const echoServerSource = `
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
const server = new McpServer({ name: 'bench-echo', version: '1.0.0' });
server.registerTool('echo', { inputSchema: { message: z.string() }, annotations: { readOnlyHint: true } }, async ({ message }) => ({ content: [{ type: 'text', text: message }] }));
await server.connect(new StdioServerTransport());
`;

function benchSpec(pluginId: string, trustLevel: TrustLevel): UpstreamSpecInput {
  return {
    pluginId,
    pluginName: pluginId,
    version: '1.0.0',
    trustLevel,
    transport: 'stdio',
    command: process.execPath,
    args: ['--input-type=module', '-e', echoServerSource],
    cwd: packageRoot,
    readOnlyPaths: [],
  };
}

/** Options of `benchProcessBound`. */
export interface ProcessBoundOptions {
  calls?: number;
  sessions?: number;
  plugins?: number;
  poolSize?: number;
  trustLevel?: TrustLevel;
}

/** Result of `benchProcessBound`. */
export interface ProcessBoundResult {
  calls: number;
  sessions: number;
  plugins: number;
  poolSize: number;
  failedCalls: number;
  /** Plugin processes the supervisor had alive at the end, before close(). */
  aliveAtEnd: number;
  /** Most plugin processes alive at once during the run. */
  maxAlive: number;
  /** OS processes carrying the supervisor's marker at the end (launchers, servers, children). */
  osProcessesAtEnd: number;
  /** OS processes carrying the marker after close(): orphans. */
  orphansAfterClose: number;
  durationMs: number;
}

/** 1,000 calls from 50 concurrent sessions to 5 plugins: how many processes were alive (DESIGN §6). */
export async function benchProcessBound(options: ProcessBoundOptions = {}): Promise<ProcessBoundResult> {
  const calls = options.calls ?? 1_000;
  const sessions = options.sessions ?? 50;
  const plugins = options.plugins ?? 5;
  const poolSize = options.poolSize ?? 1;
  const supervisor = createSupervisor({ poolSize, stopGraceMs: 200 });
  const specs = Array.from({ length: plugins }, (_, index) => benchSpec(`bench-plugin-${index}`, options.trustLevel ?? 'OFFICIAL'));
  let maxAlive = 0;
  let failedCalls = 0;
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: sessions }, async (_, session) => {
        // Each session calls plugins in its own order, one call at a time, like an agent would.
        while (next < calls) {
          const call = next++;
          const spec = specs[(call + session) % plugins]!;
          try {
            await supervisor.callTool(spec, 'echo', { message: `s${session}c${call}` });
          } catch {
            failedCalls += 1;
          }
          maxAlive = Math.max(maxAlive, supervisor.processes().length);
        }
      }),
    );
    const durationMs = performance.now() - started;
    const aliveAtEnd = supervisor.processes().length;
    const osProcessesAtEnd = processesWithEnv(supervisorMarkerName, supervisor.id).length;
    await supervisor.close();
    const orphansAfterClose = processesWithEnv(supervisorMarkerName, supervisor.id).length;
    return { calls, sessions, plugins, poolSize, failedCalls, aliveAtEnd, maxAlive, osProcessesAtEnd, orphansAfterClose, durationMs: Math.round(durationMs) };
  } finally {
    await supervisor.close();
  }
}

/** Result of `benchCallOverhead`. */
export interface CallOverheadResult {
  samples: number;
  directP50Ms: number;
  directP99Ms: number;
  supervisorP50Ms: number;
  supervisorP99Ms: number;
  addedP50Ms: number;
  addedP99Ms: number;
}

/**
 * p50/p99 of `tools/call` through the supervisor vs. a direct SDK client to the same server
 * program, interleaved call by call so both see the same machine load.
 */
export async function benchCallOverhead(options: { samples?: number; warmup?: number; trustLevel?: TrustLevel } = {}): Promise<CallOverheadResult> {
  const samples = options.samples ?? 500;
  const warmup = options.warmup ?? 50;
  const spec = benchSpec('bench-overhead', options.trustLevel ?? 'OFFICIAL');
  const supervisor = createSupervisor({ stopGraceMs: 200 });
  const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--input-type=module', '-e', echoServerSource], cwd: packageRoot, stderr: 'ignore' });
  try {
    await direct.connect(transport);
    const directCall = () => direct.callTool({ name: 'echo', arguments: { message: 'ping' } });
    const supervisedCall = () => supervisor.callTool(spec, 'echo', { message: 'ping' });
    for (let index = 0; index < warmup; index += 1) {
      await directCall();
      await supervisedCall();
    }
    const directTimes: number[] = [];
    const supervisorTimes: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      // Alternate which goes first so neither always benefits from a warm cache.
      const order = index % 2 === 0 ? [directCall, supervisedCall] : [supervisedCall, directCall];
      for (const call of order) {
        const started = performance.now();
        await call();
        (call === directCall ? directTimes : supervisorTimes).push(performance.now() - started);
      }
    }
    directTimes.sort((a, b) => a - b);
    supervisorTimes.sort((a, b) => a - b);
    const round = (value: number | undefined) => Math.round((value ?? Number.NaN) * 1_000) / 1_000;
    const directP50Ms = round(percentile(directTimes, 0.5));
    const directP99Ms = round(percentile(directTimes, 0.99));
    const supervisorP50Ms = round(percentile(supervisorTimes, 0.5));
    const supervisorP99Ms = round(percentile(supervisorTimes, 0.99));
    return {
      samples,
      directP50Ms,
      directP99Ms,
      supervisorP50Ms,
      supervisorP99Ms,
      addedP50Ms: round(supervisorP50Ms - directP50Ms),
      addedP99Ms: round(supervisorP99Ms - directP99Ms),
    };
  } finally {
    await direct.close().catch(() => undefined);
    await supervisor.close();
  }
}
