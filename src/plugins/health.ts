/**
 * @module plugins/health
 * Plugin health for the API and the CLI (runtime issue "Health", DESIGN §3.6): per installed
 * plugin, its status, the live process health the supervisor keeps (state, pids, breakers,
 * crash loop, score, window latencies) and the persisted call aggregates of
 * `plugin_call_events` over a time window; per-tool aggregates; and an active check that
 * starts a plugin, lists its tools and stops it again.
 *
 * @example
 * const health = createPluginHealth({ db, plugins, supervisor, beforeRead: () => recorder.flush() });
 * const report = await health.report({ window: '15m' });
 */
import { z } from 'zod';
import { ErrorCodes, QuiverError, isQuiverError, notFound } from '../core/errors.ts';
import { parseOrThrow } from '../core/validation.ts';
import { healthScore } from '../runtime/health.ts';
import type { PluginHealth, Supervisor } from '../runtime/supervisor.ts';
import type { Queryable } from '../store/database.ts';
import {
  pluginCallAggregates,
  toolCallAggregates,
  type CallAggregates,
  type ToolCallAggregates,
} from '../store/repositories/plugin-call-events.ts';
import type { PluginService, PublicPlugin } from './service.ts';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_WINDOW_MS = 31 * UNIT_MS.d;

/** A window as written by callers: a whole number and a unit (`15m`, `1h`, `24h`, `7d`), at most 31 days. */
export const windowSchema = z
  .string()
  .regex(/^[1-9]\d{0,5}[mhd]$/, 'a duration such as 15m, 1h, 24h or 7d')
  .refine((text) => windowMs(text) <= MAX_WINDOW_MS, 'at most 31 days');

/** Query parameters of the health endpoints. */
export const healthQuerySchema = z.object({ window: windowSchema.default('1h') });

/** Milliseconds of a window text already checked by `windowSchema`. */
function windowMs(text: string): number {
  const unit = text.slice(-1) as keyof typeof UNIT_MS;
  return Number(text.slice(0, -1)) * UNIT_MS[unit];
}

/** Timeout of calls a plugin's persisted score is measured against (the supervisor's default). */
const SCORE_TIMEOUT_MS = 30_000;

/** The supervisor's live view of one plugin (this process only). */
export interface PluginProcessHealth {
  version: string;
  state: PluginHealth['state'];
  pid: number | null;
  pids: number[];
  processes: number;
  startedAt: Date | null;
  breaker: PluginHealth['breaker'];
  toolBreakers: PluginHealth['toolBreakers'];
  crashLoop: boolean;
  crashLoopUntil: Date | null;
  recentCrashes: number;
  lastError: string | null;
  /** 0–100 (runtime/health.ts): success rate, p95 against the timeout, breaker, crash loop. */
  score: number;
  /** Over the supervisor's sliding window (last 200 calls within 5 minutes by default). */
  successRate: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  /** Since this process started it. */
  calls: number;
  failures: number;
}

/** Persisted aggregates of a plugin or tool over the window, with derived rates. */
export interface CallStats extends CallAggregates {
  /** successes / (calls − rejected): of the calls that reached the plugin; null when none did. */
  successRate: number | null;
  /** The health score of these calls (no breaker or crash-loop input; p95 against 30 s); null without calls. */
  score: number | null;
}

/** One plugin in the health report. */
export interface PluginHealthEntry {
  id: string;
  name: string;
  version: string | null;
  status: PublicPlugin['status'];
  /** The live supervisor health of this process, or null when it has not run the plugin. */
  process: PluginProcessHealth | null;
  calls: CallStats;
}

/** `report()` output. */
export interface PluginHealthReport {
  window: string;
  since: Date;
  until: Date;
  plugins: PluginHealthEntry[];
}

/** One tool in `toolCalls()` output. */
export interface ToolCallStats extends CallStats {
  toolName: string;
}

/** The outcome of an active check. */
export interface PluginCheckResult {
  id: string;
  name: string;
  ok: boolean;
  /** Start + handshake + tools/list (ms). */
  latencyMs: number;
  tools: number | null;
  error: { code: string; message: string } | null;
}

/** What the API and the CLI read plugin health from (provided by the composition root). */
export interface PluginHealthSource {
  /** Every installed plugin (or `plugin`, by name or id), restricted to `visible` names when given. */
  report(options?: { window?: string | undefined; visible?: ReadonlySet<string> | undefined; plugin?: string | undefined }): Promise<PluginHealthReport>;
  /** Per-tool aggregates of one plugin (by name or id). */
  toolCalls(plugin: string, options?: { window?: string | undefined }): Promise<{ plugin: { id: string; name: string }; window: string; since: Date; until: Date; tools: ToolCallStats[] }>;
  /**
   * Starts each plugin (the named ones, else every active plugin with a launch), lists its
   * tools and stops it again unless it was already running here.
   */
  check(options?: { plugins?: readonly string[] | undefined; timeoutMs?: number | undefined; concurrency?: number | undefined }): Promise<PluginCheckResult[]>;
}

/** Options of `createPluginHealth`. */
export interface PluginHealthOptions {
  db: Queryable;
  plugins: Pick<PluginService, 'list' | 'show' | 'upstreamSpec'>;
  supervisor: Pick<Supervisor, 'health' | 'listTools' | 'stop'>;
  /** Runs before every read, e.g. the recorder's flush so the newest calls count. */
  beforeRead?: () => Promise<void>;
  clock?: () => Date;
}

function statsOf(aggregates: CallAggregates | undefined): CallStats {
  const base: CallAggregates = aggregates ?? {
    calls: 0,
    successes: 0,
    errors: 0,
    timeouts: 0,
    rejected: 0,
    errorClasses: {},
    p50LatencyMs: null,
    p95LatencyMs: null,
    lastCallAt: null,
  };
  const attempted = base.calls - base.rejected;
  const successRate = attempted > 0 ? base.successes / attempted : null;
  const score =
    base.calls === 0
      ? null
      : healthScore({
          stats: {
            calls: attempted,
            failures: attempted - base.successes,
            successRate: successRate ?? 0,
            p50LatencyMs: base.p50LatencyMs ?? undefined,
            p95LatencyMs: base.p95LatencyMs ?? undefined,
          },
          timeoutMs: SCORE_TIMEOUT_MS,
          breakerOpen: false,
          crashLoop: false,
        });
  return { ...base, successRate, score };
}

function processOf(entries: PluginHealth[], version: string): PluginProcessHealth | null {
  if (entries.length === 0) return null;
  // The installed version's pool when there is one, else the most recently started.
  const chosen =
    entries.find((entry) => entry.version === version) ??
    [...entries].sort((a, b) => (b.startedAt?.getTime() ?? 0) - (a.startedAt?.getTime() ?? 0))[0]!;
  return {
    version: chosen.version,
    state: chosen.state,
    pid: chosen.pid ?? null,
    pids: chosen.pids,
    processes: chosen.processes,
    startedAt: chosen.startedAt ?? null,
    breaker: chosen.breaker,
    toolBreakers: chosen.toolBreakers,
    crashLoop: chosen.state === 'crash-loop',
    crashLoopUntil: chosen.crashLoopUntil ?? null,
    recentCrashes: chosen.recentCrashes,
    lastError: chosen.lastError ?? null,
    score: chosen.score,
    successRate: chosen.successRate,
    p50LatencyMs: chosen.p50LatencyMs ?? null,
    p95LatencyMs: chosen.p95LatencyMs ?? null,
    calls: chosen.calls,
    failures: chosen.failures,
  };
}

/** Creates the health source over the plugin store, the supervisor and `plugin_call_events`. */
export function createPluginHealth(options: PluginHealthOptions): PluginHealthSource {
  const { db, plugins, supervisor } = options;
  const clock = options.clock ?? (() => new Date());

  async function windowFor(text: string | undefined): Promise<{ window: string; since: Date; until: Date }> {
    const window = parseOrThrow(windowSchema, text ?? '1h', 'window');
    await options.beforeRead?.();
    const now = clock();
    // `until` is exclusive; one millisecond ahead keeps a call logged at this instant.
    return { window, since: new Date(now.getTime() - windowMs(window)), until: new Date(now.getTime() + 1) };
  }

  async function findPlugin(reference: string): Promise<PublicPlugin> {
    return (await plugins.show(reference)).plugin;
  }

  return {
    async report(reportOptions = {}) {
      const range = await windowFor(reportOptions.window);
      let listed = reportOptions.plugin === undefined ? await plugins.list() : [await findPlugin(reportOptions.plugin)];
      const { visible } = reportOptions;
      if (visible !== undefined) {
        if (reportOptions.plugin !== undefined && !visible.has(listed[0]!.name)) throw notFound('plugin', reportOptions.plugin);
        listed = listed.filter((plugin) => visible.has(plugin.name));
      }
      const aggregates = await pluginCallAggregates(db, { since: range.since, until: range.until, pluginIds: listed.map((plugin) => plugin.id) });
      const byId = new Map(aggregates.map((row) => [row.pluginId, row]));
      const live = supervisor.health();
      return {
        ...range,
        plugins: listed.map((plugin) => ({
          id: plugin.id,
          name: plugin.name,
          version: plugin.version,
          status: plugin.status,
          process: processOf(
            live.filter((entry) => entry.pluginId === plugin.id),
            plugin.version ?? 'local',
          ),
          calls: statsOf(byId.get(plugin.id)),
        })),
      };
    },

    async toolCalls(reference, toolOptions = {}) {
      const plugin = await findPlugin(reference);
      const range = await windowFor(toolOptions.window);
      const rows: ToolCallAggregates[] = await toolCallAggregates(db, plugin.id, { since: range.since, until: range.until });
      return { plugin: { id: plugin.id, name: plugin.name }, ...range, tools: rows.map((row) => ({ ...statsOf(row), toolName: row.toolName })) };
    },

    async check(checkOptions = {}) {
      const timeoutMs = checkOptions.timeoutMs ?? 15_000;
      let targets: PublicPlugin[];
      if (checkOptions.plugins !== undefined && checkOptions.plugins.length > 0) {
        targets = [];
        for (const reference of checkOptions.plugins) targets.push(await findPlugin(reference));
      } else {
        targets = (await plugins.list()).filter((plugin) => plugin.status === 'active' && plugin.launch !== null);
      }
      const results: PluginCheckResult[] = new Array(targets.length);
      let next = 0;
      const worker = async () => {
        for (let index = next++; index < targets.length; index = next++) {
          const plugin = targets[index]!;
          const wasRunning = supervisor.health().some((entry) => entry.pluginId === plugin.id && entry.state === 'running');
          const started = performance.now();
          try {
            const spec = await plugins.upstreamSpec(plugin.id);
            const tools = await supervisor.listTools(spec, { timeoutMs });
            results[index] = { id: plugin.id, name: plugin.name, ok: true, latencyMs: performance.now() - started, tools: tools.length, error: null };
          } catch (error) {
            const failure = isQuiverError(error) ? error : new QuiverError(ErrorCodes.internal, (error as Error).message ?? String(error));
            results[index] = {
              id: plugin.id,
              name: plugin.name,
              ok: false,
              latencyMs: performance.now() - started,
              tools: null,
              error: { code: failure.code, message: failure.message },
            };
          } finally {
            // A check must not take down a plugin that was serving calls before it.
            if (!wasRunning) await supervisor.stop(plugin.id).catch(() => undefined);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(checkOptions.concurrency ?? 4, targets.length)) }, worker));
      return results;
    },
  };
}
