/**
 * @module verification/stages/probe/run-probe
 * One probe run (issue #10, seed 000 §4.2 stages 4 and 6): start the plugin in the strictest
 * sandbox, list its tools following every `nextCursor`, make the planned calls (call-plan.ts)
 * a few at a time (reads first, bad-argument calls after), each bounded by a timeout, restarting the plugin after a crash, then stop
 * it and collect resources, network counters and writes. Never throws for what the plugin
 * does; the returned `ProbeResult` says it.
 */
import { setMaxListeners } from 'node:events';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { HostCapabilities } from '../../../runtime/sandbox.ts';
import type { UpstreamSpecInput } from '../../../runtime/types.ts';
import { planCalls, type CallPlan, type PlannedCall } from './call-plan.ts';
import { createSchemaCompiler } from './json-schema.ts';
import { createPluginSessions, type PluginSessions, type SessionTotals } from './plugin-sessions.ts';
import { startSandboxed, type SandboxedPlugin } from './sandboxed-start.ts';
import type { ProbeCall, ProbeCrash, ProbeResult, ProbeTool } from './types.ts';

/** Limits of a probe run (defaults keep a typical npm server well under 30 s). */
export interface ProbeOptions {
  host: HostCapabilities;
  /** Handshake limit per start, ms (default 15 000). */
  startTimeoutMs?: number;
  /** Limit of one tools/list page or tools/call, ms (default 3 000: reads answer well within it). */
  callTimeoutMs?: number;
  /** Calls in flight at once (default 4). */
  concurrency?: number;
  /** Read calls at most (default 40). */
  maxValidCalls?: number;
  /** Restarts after crashes (default 3). */
  maxRestarts?: number;
  /** Pages of tools/list followed at most (default 50). */
  maxPages?: number;
  signal?: AbortSignal;
  progress?: (message: string) => void;
}

const emptyResult = (durationMs: number, startError: string): ProbeResult => ({
  started: false,
  startError,
  listing: { tools: [], pages: 0, duplicateNames: [], repeatedCursor: false },
  calls: [],
  skipped: [],
  crashes: [],
  starts: 0,
  resources: { source: 'none', spawnedProcesses: 0, oomKills: 0 },
  network: { source: 'none', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [] },
  writes: { codeFolder: 'none', written: [], deleted: [], stateFiles: 0 },
  durationMs,
  warnings: [],
});

/** Runs the probe of one plugin launch. */
export async function runProbe(launch: UpstreamSpecInput | null, options: ProbeOptions): Promise<ProbeResult> {
  const began = Date.now();
  if (launch === null || launch.transport !== 'stdio') {
    return emptyResult(0, launch === null ? 'the plugin has no local launch to run in the sandbox' : 'a remote plugin cannot be run in the sandbox');
  }
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  // Every call in flight listens to the signal: more than Node's default of 10 is expected here.
  if (options.signal) setMaxListeners(64, options.signal);
  let first;
  try {
    first = await startSandboxed(launch, { host: options.host, startTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    return emptyResult(Date.now() - began, (error as Error).message.slice(0, 600));
  }
  const startMs = Date.now() - began;
  options.progress?.(`started in the sandbox in ${startMs} ms`);
  const sessions = createPluginSessions(first, launch, { host: options.host, startTimeoutMs, maxRestarts: options.maxRestarts ?? 3, ...(options.signal ? { signal: options.signal } : {}) });
  let exercised: Exercised;
  let totals: SessionTotals;
  try {
    exercised = await exercise(first, sessions, options);
  } finally {
    // Whatever happened above, no process, cgroup or folder of the probe outlives it.
    totals = await sessions.finish();
  }
  const { listing, plan, calls, crashes } = exercised;
  const notRun = plan.calls.filter((_, index) => calls[index] === undefined).map((call) => ({ tool: call.tool, reason: 'not run: the plugin crashed and could not be restarted' }));
  return {
    started: true,
    ...(first.protocolVersion !== undefined ? { protocolVersion: first.protocolVersion } : {}),
    ...serverInfoOf(first.client),
    launch: first.launch,
    listing,
    calls: calls.filter((call): call is ProbeCall => call !== undefined),
    skipped: [...plan.skipped, ...notRun],
    crashes,
    starts: totals.starts,
    resources: totals.resources,
    network: totals.network,
    writes: totals.writes,
    startMs,
    durationMs: Date.now() - began,
    warnings: first.launch.warnings,
  };
}

/** What exercising the plugin produced; `calls[i]` answers `plan.calls[i]` (undefined: not run). */
interface Exercised {
  listing: ProbeResult['listing'];
  plan: CallPlan;
  calls: Array<ProbeCall | undefined>;
  crashes: ProbeCrash[];
}

/** Lists the tools and makes the planned calls, restarting the plugin after a crash. */
async function exercise(first: SandboxedPlugin, sessions: PluginSessions, options: ProbeOptions): Promise<Exercised> {
  const crashes: ProbeCrash[] = [];
  const inFlight = new Set<string>();
  const watched = new Set<SandboxedPlugin>();
  const watch = (plugin: SandboxedPlugin): void => {
    if (watched.has(plugin)) return;
    watched.add(plugin);
    void plugin.ended.then((reason) => crashes.push({ reason, during: [...inFlight] }));
  };
  watch(first);
  const callTimeoutMs = options.callTimeoutMs ?? 3_000;
  const listing = await listTools(first.client, callTimeoutMs, options.maxPages ?? 50, options.signal);
  const planned = planCalls(listing.tools, createSchemaCompiler(), options.maxValidCalls ?? 40);
  // Reads first, then the bad-argument calls: a plugin that crashes on bad arguments must not
  // take reads still in flight down with it (they would count against its behaviour).
  const plan = { ...planned, calls: [...planned.calls.filter((call) => call.kind === 'valid'), ...planned.calls.filter((call) => call.kind !== 'valid')] };
  options.progress?.(`${listing.tools.length} tools listed; ${plan.calls.length} calls planned`);
  const callOne = async (call: PlannedCall): Promise<ProbeCall | undefined> => {
    const plugin = await sessions.current();
    if (!plugin) return undefined;
    watch(plugin);
    inFlight.add(call.tool);
    try {
      return await callTool(plugin.client, call, callTimeoutMs, options.signal, plugin.isRunning);
    } finally {
      inFlight.delete(call.tool);
    }
  };
  const concurrency = options.concurrency ?? 4;
  const valid = await runCalls(plan.calls.filter((call) => call.kind === 'valid'), concurrency, callOne);
  const bad = await runCalls(plan.calls.filter((call) => call.kind !== 'valid'), concurrency, callOne);
  return { listing, plan, calls: [...valid, ...bad], crashes };
}

function serverInfoOf(client: Client): { serverInfo?: { name: string; version: string } } {
  const info = client.getServerVersion();
  return info ? { serverInfo: { name: info.name, version: info.version } } : {};
}

/** Runs `work` over `items`, `concurrency` at a time, keeping the order of results. */
async function runCalls<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return results;
}

/** tools/list with every page followed; a failing page ends the listing with `error`. */
async function listTools(client: Client, timeoutMs: number, maxPages: number, signal: AbortSignal | undefined): Promise<ProbeResult['listing']> {
  const tools: ProbeTool[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let repeatedCursor = false;
  let error: string | undefined;
  while (pages < maxPages) {
    try {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
      pages += 1;
      tools.push(...page.tools.map((tool) => ({ ...tool, inputSchema: tool.inputSchema as Record<string, unknown> }) as ProbeTool));
      if (!page.nextCursor) break;
      if (cursors.has(page.nextCursor)) {
        repeatedCursor = true;
        break;
      }
      cursors.add(page.nextCursor);
      cursor = page.nextCursor;
    } catch (failure) {
      error = (failure as Error).message.slice(0, 300);
      break;
    }
  }
  const seen = new Set<string>();
  const duplicateNames = [...new Set(tools.map((tool) => tool.name).filter((name) => seen.has(name) || !seen.add(name)))];
  return { tools, pages, duplicateNames, repeatedCursor, ...(error !== undefined ? { error } : {}) };
}

/** One tools/call, classified (the SDK's own output-schema check is bypassed: the stage judges it). */
async function callTool(client: Client, planned: PlannedCall, timeoutMs: number, signal: AbortSignal | undefined, isRunning: () => boolean): Promise<ProbeCall> {
  const started = performance.now();
  const base = { tool: planned.tool, kind: planned.kind };
  try {
    const result = await client.request(
      { method: 'tools/call', params: { name: planned.tool, arguments: planned.arguments } },
      CallToolResultSchema,
      { timeout: timeoutMs, ...(signal ? { signal } : {}) },
    );
    const latencyMs = Math.round(performance.now() - started);
    if (result.isError === true) return { ...base, outcome: 'tool-error', latencyMs, message: textOf(result.content) };
    return { ...base, outcome: 'result', latencyMs, ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}) };
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started);
    const message = (error as Error).message.slice(0, 300);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { ...base, outcome: 'timeout', latencyMs, message };
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) return { ...base, outcome: 'protocol-error', latencyMs, errorCode: error.code, message };
    // A closed connection, or an answer that is not a CallToolResult from a process still running.
    if (error instanceof McpError || !isRunning()) return { ...base, outcome: 'crash', latencyMs, message };
    return { ...base, outcome: 'protocol-error', latencyMs, message };
  }
}

function textOf(content: ReadonlyArray<{ type: string; text?: unknown }>): string {
  return content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join(' ')
    .slice(0, 300);
}
