/**
 * @module verification/stages/probe/exercise
 * The part of a probe run that talks MCP (issue #10): list the tools following every
 * `nextCursor`, plan the calls (call-plan.ts), make them a few at a time — reads first,
 * bad-argument calls after — each bounded by a timeout, and note every unexpected end of the
 * plugin with the calls that were in flight. The same for a sandboxed process and a remote
 * plugin: a `ProbeTarget` is either.
 */
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { planCalls, type CallPlan, type PlannedCall } from './call-plan.ts';
import { createSchemaCompiler } from './json-schema.ts';
import type { ProbeCall, ProbeCrash, ProbeResult, ProbeTool } from './types.ts';

/** A connected plugin as the exercise phase uses it. */
export interface ProbeTarget {
  client: Client;
  protocolVersion: string | undefined;
  /** Resolves (with why) when the plugin ends without being asked to. */
  ended: Promise<string>;
  isRunning(): boolean;
}

/** Limits of the exercise phase. */
export interface ExerciseOptions {
  /** Limit of one tools/list page or tools/call, ms (default 3 000: reads answer well within it). */
  callTimeoutMs?: number;
  /** Calls in flight at once (default 4). */
  concurrency?: number;
  /** Tools called at most (default 40). */
  maxValidCalls?: number;
  /** No call starts later than this after the listing, ms (default 15 000). */
  budgetMs?: number;
  /** Pages of tools/list followed at most (default 50). */
  maxPages?: number;
  /** The plugin runs in a throwaway sandbox, so tools that are not reads may be exercised (default true). */
  contained?: boolean;
  signal?: AbortSignal;
  progress?: (message: string) => void;
}

/** What exercising the plugin produced; `calls[i]` answers `plan.calls[i]` (undefined: not run). */
export interface Exercised {
  listing: ProbeResult['listing'];
  plan: CallPlan;
  calls: Array<ProbeCall | undefined>;
  crashes: ProbeCrash[];
}

/** Lists the tools and makes the planned calls, restarting the plugin after a crash. */
export async function exercise(first: ProbeTarget, sessions: { current(): Promise<ProbeTarget | undefined> }, options: ExerciseOptions): Promise<Exercised> {
  const crashes: ProbeCrash[] = [];
  const inFlight = new Set<string>();
  const watched = new Set<ProbeTarget>();
  const watch = (plugin: ProbeTarget): void => {
    if (watched.has(plugin)) return;
    watched.add(plugin);
    void plugin.ended.then((reason) => crashes.push({ reason, during: [...inFlight] }));
  };
  watch(first);
  const callTimeoutMs = options.callTimeoutMs ?? 3_000;
  const listing = await listTools(first.client, callTimeoutMs, options.maxPages ?? 50, options.signal);
  const planned = planCalls(listing.tools, createSchemaCompiler(), options.maxValidCalls ?? 40, options.contained ?? true);
  // Reads first, then the bad-argument calls: a plugin that crashes on bad arguments must not
  // take reads still in flight down with it (they would count against its behaviour).
  const ofKinds = (kinds: readonly string[]) => planned.calls.filter((call) => kinds.includes(call.kind));
  const plan = { ...planned, calls: [...ofKinds(['valid']), ...ofKinds(['exercise', 'edge']), ...ofKinds(['missing-required', 'wrong-type'])] };
  options.progress?.(`${listing.tools.length} tools listed; ${plan.calls.length} calls planned`);
  // Issue #23: a typical npm server is verified within 30 s: no call starts after the budget.
  const deadline = performance.now() + (options.budgetMs ?? 15_000);
  const callOne = async (call: PlannedCall): Promise<ProbeCall | undefined> => {
    if (performance.now() > deadline) return undefined;
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
  const rest = await runCalls(plan.calls.filter((call) => call.kind !== 'valid'), concurrency, callOne);
  return { listing, plan, calls: [...valid, ...rest], crashes };
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
