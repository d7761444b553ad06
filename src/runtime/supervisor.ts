/**
 * @module runtime/supervisor
 * The one owner of every plugin process (DESIGN §3.6; seed 003 "Performance and Connection
 * Management", "Error Handling and Security"): lazy start on first use, one warm MCP
 * connection per plugin version (or a bounded pool) shared by all sessions, idle shutdown,
 * restart with exponential backoff and a crash-loop stop, a global process cap, and for every
 * call a timeout, the PID's retry policy (idempotent tools only), circuit breakers, token
 * buckets and concurrency caps. Isolation follows trust (`isolation-policy.ts`, `sandbox.ts`).
 *
 * @example
 * const supervisor = createSupervisor({ onCall: (event) => analytics.record(event) });
 * const result = await supervisor.callTool(spec, 'search', { query: 'x' });
 * await supervisor.close();
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, createHash } from 'node:crypto';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, GetPromptResult, Implementation, Prompt, ReadResourceResult, Resource, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError, isQuiverError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { createCircuitBreaker, type BreakerPermit, type BreakerState, type CircuitBreaker } from './breaker.ts';
import { cgroupName, type CgroupHandle } from './cgroup.ts';
import { createCallWindow, healthScore, type CallWindow } from './health.ts';
import { isolationPolicyFor } from './isolation-policy.ts';
import { sleep } from './process-tree.ts';
import { createTokenBucket, takeAll, type TokenBucket } from './rate-limit.ts';
import { redactorForSpec, type Redactor } from './redact.ts';
import { buildLaunch, defaultSearchPath, detectHost, sandboxUid, type HostCapabilities, type LaunchDescription } from './sandbox.ts';
import { pluginStateDir } from './state-dir.ts';
import { createSemaphore, type Semaphore } from './semaphore.ts';
import {
  circuitBreakerConfigSchema,
  parseUpstreamSpec,
  retryPolicySchema,
  systemClock,
  type CallEvent,
  type CallOutcome,
  type CircuitBreakerConfig,
  type Clock,
  type ResourceLimits,
  type StdioSpec,
  type UpstreamSpec,
  type UpstreamSpecInput,
} from './types.ts';
import { connectHttp, connectStdio, listAllPrompts, listAllResources, listAllTools, type UpstreamConnection } from './upstream-client.ts';
import { withoutMcpErrorPrefix } from '../core/mcp-error-text.ts';

/** Sandbox and launcher settings. */
export interface SandboxOptions {
  /** Path of bwrap; `null` pretends bubblewrap is missing. Default: found on `searchPath`. */
  bubblewrapPath?: string | null;
  /** Run plugins that need a sandbox without one when bubblewrap is unusable (QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED). */
  dangerouslyAllowUnsandboxed?: boolean;
  /** Use cgroups for CPU/memory/pids limits when available (default true). */
  useCgroups?: boolean;
  /** Show a sandboxed plugin's install folder writable through an overlay kept in its state folder (default true). */
  codeOverlay?: boolean;
  /** Folder holding each plugin's writable state folder. Default: a fresh temp folder removed on close. */
  stateRoot?: string;
  /** Executable search path for commands, bwrap and setpriv. */
  searchPath?: string;
  /** Environment of unsandboxed plugins before their declared env (default: the MCP SDK's safe subset of the hub's). */
  baseEnv?: Record<string, string>;
  /** Limits overriding the isolation policy's defaults (per spec `limits` win). */
  defaultLimits?: ResourceLimits;
}

/** Options of `createSupervisor`. */
export interface SupervisorOptions {
  logger?: Logger;
  clock?: Clock;
  sandbox?: SandboxOptions;
  /** Connections (processes) per plugin version (default 1). */
  poolSize?: number;
  /** Upper bound for `poolSize` (default 8). */
  maxPoolSize?: number;
  /** Live plugin processes across all plugins (default 32); idle ones are evicted to make room. */
  maxProcesses?: number;
  /** Stop a connection unused this long (ms, default 300 000). */
  idleTimeoutMs?: number;
  /** Call timeout when neither the call nor the PID gives one (ms, default 30 000). */
  defaultTimeoutMs?: number;
  /** MCP handshake timeout (ms, default 15 000). */
  startTimeoutMs?: number;
  /** Grace given to a stopping plugin before SIGTERM, then SIGKILL (ms, default 1 000). */
  stopGraceMs?: number;
  /** Ping idle connections this often (ms); 0 disables (default 0). */
  pingIntervalMs?: number;
  /** Timeout of a liveness ping (ms, default 2 000). */
  pingTimeoutMs?: number;
  /** Restart backoff after a crash: initial delay doubling up to max (ms). */
  restartBackoff?: { initialMs?: number; maxMs?: number };
  /** `maxCrashes` within `windowMs` puts a plugin in 'crash-loop' for `cooldownMs` (or until `reset`). */
  crashLoop?: { maxCrashes?: number; windowMs?: number; cooldownMs?: number };
  /** Breaker settings when the PID has none. */
  breakerDefaults?: Partial<CircuitBreakerConfig>;
  /** Health window: last `size` calls within `ms`. */
  healthWindow?: { size?: number; ms?: number };
  /** Receives one event per upstream tool call. */
  onCall?: (event: CallEvent) => void;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The tool's MCP annotations when the caller knows them (else the supervisor asks the plugin). */
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean };
}

/** What `discover()` found. */
export interface Discovery {
  serverInfo: Implementation | undefined;
  capabilities: ServerCapabilities | undefined;
  instructions: string | undefined;
  tools: Tool[];
  resources: Resource[];
  prompts: Prompt[];
  launch: LaunchDescription | undefined;
  durationMs: number;
}

export type PluginState = 'idle' | 'starting' | 'running' | 'backoff' | 'crash-loop';

/** Health of one plugin version (`supervisor.health()`). */
export interface PluginHealth {
  pluginId: string;
  pluginName: string;
  version: string;
  state: PluginState;
  pid: number | undefined;
  pids: number[];
  processes: number;
  startedAt: Date | undefined;
  calls: number;
  failures: number;
  successRate: number;
  p50LatencyMs: number | undefined;
  p95LatencyMs: number | undefined;
  breaker: BreakerState;
  toolBreakers: Record<string, BreakerState>;
  recentCrashes: number;
  crashLoopUntil: Date | undefined;
  lastError: string | undefined;
  launch: LaunchDescription | undefined;
  score: number;
}

/** The supervisor. */
export interface Supervisor {
  callTool(spec: UpstreamSpecInput, toolName: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
  listTools(spec: UpstreamSpecInput, options?: CallOptions): Promise<Tool[]>;
  listResources(spec: UpstreamSpecInput, options?: CallOptions): Promise<Resource[]>;
  readResource(spec: UpstreamSpecInput, uri: string, options?: CallOptions): Promise<ReadResourceResult>;
  listPrompts(spec: UpstreamSpecInput, options?: CallOptions): Promise<Prompt[]>;
  getPrompt(spec: UpstreamSpecInput, name: string, args?: Record<string, string>, options?: CallOptions): Promise<GetPromptResult>;
  /** One-shot discovery: start (sandboxed per trust), handshake, list everything, stop. */
  discover(spec: UpstreamSpecInput, options?: { timeoutMs?: number }): Promise<Discovery>;
  /** Stops every process of a plugin (all versions); calls start it again lazily. */
  stop(pluginId: string): Promise<void>;
  /** Clears a plugin's crash-loop flag, crash history and breakers. */
  reset(pluginId: string): void;
  health(): PluginHealth[];
  /** Live plugin processes (pids of the launched leaders). */
  processes(): Array<{ pluginId: string; version: string; pid: number | undefined }>;
  /** What the host offers for isolation (probes on first use). */
  host(): HostCapabilities;
  /** The marker set as QUIVER_SUPERVISOR_ID in every process this supervisor starts. */
  readonly id: string;
  /** Kills every plugin process and stops all timers; later calls fail. */
  close(): Promise<void>;
}

interface Instance {
  id: number;
  entry: Entry;
  state: 'starting' | 'ready' | 'stopping';
  ready: Promise<UpstreamConnection>;
  connection: UpstreamConnection | undefined;
  inFlight: number;
  lastUsedAt: number;
  idleTimer: NodeJS.Timeout | undefined;
  endReason: string | undefined;
  retire: boolean;
}

interface Limiters {
  pluginBucket: TokenBucket | undefined;
  toolBuckets: Map<string, TokenBucket | null>;
  pluginSemaphore: Semaphore | undefined;
  toolSemaphores: Map<string, Semaphore | null>;
}

interface Entry {
  key: string;
  spec: UpstreamSpec;
  fingerprint: string;
  redact: Redactor;
  instances: Instance[];
  crashes: number[];
  consecutiveCrashes: number;
  nextStartAt: number;
  crashLoopUntil: number | undefined;
  lastError: string | undefined;
  breakerConfig: CircuitBreakerConfig;
  pluginBreaker: CircuitBreaker;
  toolBreakers: Map<string, CircuitBreaker>;
  limiters: Limiters;
  window: CallWindow;
  totals: { calls: number; failures: number };
  annotations: Map<string, Tool['annotations']> | undefined;
  lastLaunch: LaunchDescription | undefined;
  lastStartedAt: number | undefined;
}

const closedErrorMessage = 'the plugin supervisor is closed';
const noRetry = retryPolicySchema.parse({ maxAttempts: 1 });

function fingerprintOf(spec: UpstreamSpec): string {
  return createHash('sha256').update(JSON.stringify(spec)).digest('hex');
}


/** Creates the plugin supervisor. Nothing starts until the first call. */
export function createSupervisor(options: SupervisorOptions = {}): Supervisor {
  const logger = (options.logger ?? silentLogger).child({ component: 'runtime' });
  const clock = options.clock ?? systemClock;
  const maxPoolSize = options.maxPoolSize ?? 8;
  const poolSize = Math.max(1, Math.min(options.poolSize ?? 1, maxPoolSize));
  const maxProcesses = Math.max(1, options.maxProcesses ?? 32);
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  const stopGraceMs = options.stopGraceMs ?? 1_000;
  const pingTimeoutMs = options.pingTimeoutMs ?? 2_000;
  const backoffInitial = options.restartBackoff?.initialMs ?? 200;
  const backoffMax = options.restartBackoff?.maxMs ?? 10_000;
  const crashLimit = options.crashLoop?.maxCrashes ?? 5;
  const crashWindowMs = options.crashLoop?.windowMs ?? 60_000;
  const crashCooldownMs = options.crashLoop?.cooldownMs ?? 300_000;
  const sandboxOptions = options.sandbox ?? {};
  const searchPath = sandboxOptions.searchPath ?? defaultSearchPath;
  const id = randomBytes(8).toString('hex');

  const entries = new Map<string, Entry>();
  const specCache = new WeakMap<object, UpstreamSpec>();
  const discoveries = new Set<UpstreamConnection>();
  let hostCapabilities: HostCapabilities | undefined;
  let stateRoot = sandboxOptions.stateRoot;
  let ownsStateRoot = false;
  let closed = false;
  let instanceSeq = 0;

  const pingTimer =
    options.pingIntervalMs && options.pingIntervalMs > 0 ? setInterval(() => void pingIdle(), options.pingIntervalMs) : undefined;
  pingTimer?.unref();

  function host(): HostCapabilities {
    if (!hostCapabilities) {
      hostCapabilities = detectHost({ bubblewrapPath: sandboxOptions.bubblewrapPath, searchPath, useCgroups: sandboxOptions.useCgroups, codeOverlay: sandboxOptions.codeOverlay });
      const swept = hostCapabilities.cgroups.sweepStale();
      if (swept > 0) logger.info({ swept }, 'removed cgroups left by an earlier Quiver process');
    }
    return hostCapabilities;
  }

  function parseSpec(input: UpstreamSpecInput): UpstreamSpec {
    const cached = specCache.get(input);
    if (cached) return cached;
    const spec = parseUpstreamSpec(input);
    specCache.set(input, spec);
    return spec;
  }

  function ensureOpen(): void {
    if (closed) throw new QuiverError(ErrorCodes.unavailable, closedErrorMessage, { details: { reason: 'closed' } });
  }

  function makeLimiters(spec: UpstreamSpec): Limiters {
    const rate = spec.execution.rateLimits;
    const concurrency = spec.execution.concurrency;
    return {
      pluginBucket: rate?.plugin ? createTokenBucket(rate.plugin, clock) : undefined,
      toolBuckets: new Map(),
      pluginSemaphore: concurrency?.plugin ? createSemaphore(concurrency.plugin, concurrency.maxQueue, `plugin '${spec.pluginName}'`) : undefined,
      toolSemaphores: new Map(),
    };
  }

  const fingerprints = new WeakMap<UpstreamSpec, string>();

  function entryFor(spec: UpstreamSpec): Entry {
    const key = `${spec.pluginId}@${spec.version}`;
    let entry = entries.get(key);
    // Hashing on every call would cost more than the rest of the call path: cache per spec object.
    let fingerprint = fingerprints.get(spec);
    if (fingerprint === undefined) {
      fingerprint = fingerprintOf(spec);
      fingerprints.set(spec, fingerprint);
    }
    if (!entry) {
      const breakerConfig = circuitBreakerConfigSchema.parse({ ...options.breakerDefaults, ...spec.execution.circuitBreakerConfig });
      entry = {
        key,
        spec,
        fingerprint,
        redact: redactorForSpec(spec),
        instances: [],
        crashes: [],
        consecutiveCrashes: 0,
        nextStartAt: 0,
        crashLoopUntil: undefined,
        lastError: undefined,
        breakerConfig,
        pluginBreaker: createCircuitBreaker(breakerConfig, clock),
        toolBreakers: new Map(),
        limiters: makeLimiters(spec),
        window: createCallWindow(clock, options.healthWindow?.size, options.healthWindow?.ms),
        totals: { calls: 0, failures: 0 },
        annotations: undefined,
        lastLaunch: undefined,
        lastStartedAt: undefined,
      };
      entries.set(key, entry);
    } else if (entry.fingerprint !== fingerprint) {
      // Same plugin version, new settings (rotated credentials, new limits): retire the old processes.
      logger.info({ pluginId: spec.pluginId, version: spec.version }, 'plugin settings changed; recycling its connections');
      entry.spec = spec;
      entry.fingerprint = fingerprint;
      entry.redact = redactorForSpec(spec);
      entry.limiters = makeLimiters(spec);
      entry.annotations = undefined;
      for (const instance of [...entry.instances]) {
        instance.retire = true;
        if (instance.inFlight === 0) void stopInstance(instance, 'settings changed');
      }
    }
    return entry;
  }

  function toolBreaker(entry: Entry, tool: string): CircuitBreaker {
    let breaker = entry.toolBreakers.get(tool);
    if (!breaker) {
      breaker = createCircuitBreaker(entry.breakerConfig, clock);
      entry.toolBreakers.set(tool, breaker);
    }
    return breaker;
  }

  function toolBucket(entry: Entry, tool: string): TokenBucket | undefined {
    const cached = entry.limiters.toolBuckets.get(tool);
    if (cached !== undefined) return cached ?? undefined;
    const rate = entry.spec.execution.rateLimits;
    const config = rate?.tools[tool] ?? rate?.perTool;
    const bucket = config ? createTokenBucket(config, clock) : undefined;
    entry.limiters.toolBuckets.set(tool, bucket ?? null);
    return bucket;
  }

  function toolSemaphore(entry: Entry, tool: string): Semaphore | undefined {
    const cached = entry.limiters.toolSemaphores.get(tool);
    if (cached !== undefined) return cached ?? undefined;
    const concurrency = entry.spec.execution.concurrency;
    const limit = concurrency?.tools[tool] ?? concurrency?.perTool;
    const semaphore = limit && concurrency ? createSemaphore(limit, concurrency.maxQueue, `tool '${entry.spec.pluginName}/${tool}'`) : undefined;
    entry.limiters.toolSemaphores.set(tool, semaphore ?? null);
    return semaphore;
  }

  // ---- crash accounting -------------------------------------------------------------

  function inCrashLoop(entry: Entry): boolean {
    if (entry.crashLoopUntil === undefined) return false;
    if (clock.now() < entry.crashLoopUntil) return true;
    entry.crashLoopUntil = undefined;
    entry.crashes = [];
    entry.consecutiveCrashes = 0;
    return false;
  }

  function crashLoopError(entry: Entry): QuiverError {
    return new QuiverError(
      ErrorCodes.unavailable,
      `plugin '${entry.spec.pluginName}' is in a crash loop (${crashLimit} crashes within ${Math.round(crashWindowMs / 1000)} s) and is not restarted until ${new Date(entry.crashLoopUntil ?? 0).toISOString()} or an admin resets it; last error: ${entry.lastError ?? 'unknown'}`,
      { details: { reason: 'crash_loop', pluginId: entry.spec.pluginId, until: entry.crashLoopUntil } },
    );
  }

  function recordCrash(entry: Entry, reason: string): void {
    const now = clock.now();
    entry.lastError = reason;
    entry.crashes = entry.crashes.filter((at) => now - at < crashWindowMs);
    entry.crashes.push(now);
    entry.consecutiveCrashes += 1;
    entry.nextStartAt = now + Math.min(backoffMax, backoffInitial * 2 ** (entry.consecutiveCrashes - 1));
    if (entry.crashes.length >= crashLimit && entry.crashLoopUntil === undefined) {
      entry.crashLoopUntil = now + crashCooldownMs;
      logger.error({ pluginId: entry.spec.pluginId, version: entry.spec.version, crashes: entry.crashes.length }, 'plugin is in a crash loop; not restarting it');
    } else {
      logger.warn({ pluginId: entry.spec.pluginId, version: entry.spec.version, reason, backoffMs: entry.nextStartAt - now }, 'plugin process failed');
    }
  }

  // ---- instances --------------------------------------------------------------------

  function liveInstances(): Instance[] {
    return [...entries.values()].flatMap((entry) => entry.instances.filter((instance) => instance.state !== 'stopping'));
  }

  function stateDirFor(spec: StdioSpec, sandboxed: boolean): string {
    let directory = spec.stateDir;
    if (!directory) {
      if (!stateRoot) {
        stateRoot = mkdtempSync(join(tmpdir(), 'quiver-runtime-'));
        // Traversable (not listable) by the sandbox user, who must reach its own folder inside.
        chmodSync(stateRoot, 0o711);
        ownsStateRoot = true;
      } else {
        // A configured root may not exist yet; a recursive mkdir below would create it 0700,
        // hiding every plugin folder from the sandbox user.
        mkdirSync(stateRoot, { recursive: true, mode: 0o711 });
      }
      directory = pluginStateDir(stateRoot, spec.pluginId);
    }
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // The sandbox runs as `nobody` on the host; its own folder must be writable by it.
    if (sandboxed && host().isRoot) chownSync(directory, sandboxUid, sandboxUid);
    return directory;
  }

  async function connect(entry: Entry, instanceId: number, signal?: AbortSignal): Promise<UpstreamConnection> {
    const spec = entry.spec;
    if (spec.transport === 'http') return connectHttp(spec, { startTimeoutMs, redact: entry.redact, clock, signal });
    const capabilities = host();
    const policy = isolationPolicyFor(spec.trustLevel, { ...sandboxOptions.defaultLimits, ...spec.limits });
    const sandboxed = policy.sandbox && capabilities.bubblewrap !== undefined;
    const stateDir = stateDirFor(spec, sandboxed);
    let cgroup: CgroupHandle | undefined;
    if (policy.limits && capabilities.cgroups.kind !== 'none') {
      try {
        cgroup = capabilities.cgroups.create(cgroupName(id, instanceId), policy.limits);
      } catch (error) {
        logger.warn({ pluginId: spec.pluginId, error: (error as Error).message }, 'cannot create a cgroup; falling back');
      }
    }
    let launch;
    try {
      launch = buildLaunch(spec, {
        host: capabilities,
        policy,
        stateDir,
        cgroupProcsFiles: cgroup?.procsFiles ?? [],
        baseEnv: sandboxOptions.baseEnv ?? getDefaultEnvironment(),
        searchPath,
        marker: id,
        dangerouslyAllowUnsandboxed: sandboxOptions.dangerouslyAllowUnsandboxed ?? false,
      });
    } catch (error) {
      await cgroup?.remove();
      throw error;
    }
    for (const warning of launch.description.warnings) logger.warn({ pluginId: spec.pluginId, version: spec.version }, warning);
    entry.lastLaunch = launch.description;
    return connectStdio(spec, launch, { startTimeoutMs, redact: entry.redact, clock, cgroup, stopGraceMs, signal });
  }

  function startInstance(entry: Entry): Instance {
    instanceSeq += 1;
    const instance: Instance = {
      id: instanceSeq,
      entry,
      state: 'starting',
      ready: undefined as unknown as Promise<UpstreamConnection>,
      connection: undefined,
      inFlight: 0,
      lastUsedAt: clock.now(),
      idleTimer: undefined,
      endReason: undefined,
      retire: false,
    };
    entry.instances.push(instance);
    instance.ready = (async () => {
      // Restart backoff after a crash (the start continues even if the first caller gives up).
      const wait = entry.nextStartAt - clock.now();
      if (wait > 0) await sleep(wait);
      if (closed) throw new QuiverError(ErrorCodes.unavailable, closedErrorMessage);
      if ((instance.state as Instance['state']) === 'stopping') throw new QuiverError(ErrorCodes.unavailable, `plugin '${entry.spec.pluginName}' was stopped`, { details: { reason: 'stopped' } });
      const connection = await connect(entry, instance.id);
      if (closed || (instance.state as Instance['state']) === 'stopping') {
        await connection.close();
        throw new QuiverError(ErrorCodes.unavailable, closed ? closedErrorMessage : `plugin '${entry.spec.pluginName}' was stopped`);
      }
      instance.connection = connection;
      instance.state = 'ready';
      entry.lastStartedAt = connection.startedAt;
      scheduleIdle(instance);
      logger.info({ pluginId: entry.spec.pluginId, version: entry.spec.version, pid: connection.pid, launch: connection.launch }, 'plugin started');
      connection.onEnd((end) => {
        instance.endReason = end.reason;
        removeInstance(instance);
        if (!end.requested && !closed) recordCrash(entry, `plugin '${entry.spec.pluginName}' stopped unexpectedly: ${end.reason}${connection.stderrTail() ? `; stderr: ${connection.stderrTail().slice(-400)}` : ''}`);
      });
      return connection;
    })();
    instance.ready.catch((error: unknown) => {
      const requested = instance.state === 'stopping';
      removeInstance(instance);
      if (closed || requested) return;
      if (isQuiverError(error) && (error.details as { reason?: string } | undefined)?.reason === 'sandbox_unavailable') {
        entry.lastError = error.message;
        return;
      }
      recordCrash(entry, entry.redact(error instanceof Error ? error.message : String(error)));
    });
    return instance;
  }

  function removeInstance(instance: Instance): void {
    const list = instance.entry.instances;
    const index = list.indexOf(instance);
    if (index >= 0) list.splice(index, 1);
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    instance.idleTimer = undefined;
  }

  async function stopInstance(instance: Instance, why: string): Promise<void> {
    if (instance.state === 'stopping') return;
    const wasStarting = instance.state === 'starting';
    instance.state = 'stopping';
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    logger.debug({ pluginId: instance.entry.spec.pluginId, pid: instance.connection?.pid, why }, 'stopping plugin process');
    if (wasStarting) {
      // The starter notices `stopping` and closes the connection itself.
      await instance.ready.catch(() => undefined);
      removeInstance(instance);
      return;
    }
    await instance.connection?.close();
    removeInstance(instance);
  }

  function scheduleIdle(instance: Instance): void {
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    instance.idleTimer = undefined;
    if (instance.inFlight > 0 || instance.state !== 'ready') return;
    if (instance.retire) {
      void stopInstance(instance, 'retired');
      return;
    }
    instance.idleTimer = setTimeout(() => {
      if (instance.inFlight === 0 && instance.state === 'ready') void stopInstance(instance, 'idle');
    }, idleTimeoutMs);
    instance.idleTimer.unref();
  }

  /** Evicts the least recently used idle process of another plugin; false when there is none. */
  function evictForRoom(entry: Entry): Promise<void> | undefined {
    const idle = liveInstances()
      .filter((instance) => instance.state === 'ready' && instance.inFlight === 0 && instance.entry !== entry)
      .sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
    return idle ? stopInstance(idle, 'evicted to respect maxProcesses') : undefined;
  }

  function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, rejectPromise) => {
      const onAbort = (): void => rejectPromise(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          rejectPromise(error);
        },
      );
    });
  }

  /**
   * Picks a connection: an idle ready one; else, below the pool size, a new one (started in the
   * background when a busy one can serve now, since MCP multiplexes requests on one connection);
   * else the least busy; else waits for one that is starting.
   */
  async function acquireConnection(entry: Entry, signal: AbortSignal): Promise<Instance> {
    for (;;) {
      ensureOpen();
      if (inCrashLoop(entry)) throw crashLoopError(entry);
      const usable = entry.instances.filter((instance) => !instance.retire && instance.state !== 'stopping');
      const ready = usable.filter((instance) => instance.state === 'ready' && instance.connection?.isOpen());
      const leastBusy = ready.sort((a, b) => a.inFlight - b.inFlight)[0];
      if (leastBusy && leastBusy.inFlight === 0) return leastBusy;
      if (usable.length < poolSize) {
        if (leastBusy) {
          if (liveInstances().length < maxProcesses) startInstance(entry);
          return leastBusy;
        }
        // Decide and start synchronously: concurrent callers must see the new instance.
        if (liveInstances().length < maxProcesses) {
          const started = startInstance(entry);
          await untilAborted(started.ready, signal);
          if (started.state === 'ready') return started;
          continue;
        }
        const eviction = usable.length === 0 ? evictForRoom(entry) : undefined;
        if (eviction) {
          await untilAborted(eviction, signal);
          continue;
        }
        if (usable.length === 0) {
          throw new QuiverError(ErrorCodes.unavailable, `cannot start plugin '${entry.spec.pluginName}': ${maxProcesses} plugin processes are running and all are busy (maxProcesses)`, {
            details: { reason: 'process_limit', maxProcesses },
          });
        }
      }
      if (leastBusy) return leastBusy;
      const starting = usable.find((instance) => instance.state === 'starting');
      if (starting) {
        await untilAborted(starting.ready, signal);
        continue;
      }
      await sleep(5, signal);
      if (signal.aborted) throw signal.reason;
    }
  }

  // ---- calls ------------------------------------------------------------------------

  interface Deadline {
    signal: AbortSignal;
    /** Stops the clock (while a plugin starts: its handshake has its own startTimeoutMs). */
    pause(): void;
    /** Gives the request its full timeout from now (the timeout is per attempt). */
    restart(): void;
    remaining(): number;
    timedOut(): boolean;
    dispose(): void;
  }

  function deadlineFor(entry: Entry, what: string, timeoutMs: number, outer: AbortSignal | undefined): Deadline {
    const controller = new AbortController();
    let armedAt = clock.now();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const fire = (): void => {
      timedOut = true;
      controller.abort(
        new QuiverError(ErrorCodes.timeout, `plugin '${entry.spec.pluginName}' did not answer ${what} within ${timeoutMs} ms`, {
          details: { pluginId: entry.spec.pluginId, timeoutMs },
        }),
      );
    };
    const arm = (): void => {
      clearTimeout(timer);
      armedAt = clock.now();
      if (!controller.signal.aborted) timer = setTimeout(fire, timeoutMs);
    };
    arm();
    const onOuterAbort = (): void => controller.abort(new QuiverError('cancelled', `${what} was cancelled by the caller`, { kind: 'user' }));
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    return {
      signal: controller.signal,
      pause: () => clearTimeout(timer),
      restart: arm,
      remaining: () => Math.max(0, timeoutMs - (clock.now() - armedAt)),
      timedOut: () => timedOut,
      dispose() {
        clearTimeout(timer);
        outer?.removeEventListener('abort', onOuterAbort);
      },
    };
  }

  /** Turns whatever a request threw into a QuiverError, noticing crashes and timeouts. */
  function classify(entry: Entry, instance: Instance | undefined, error: unknown, deadline: Deadline, what: string): QuiverError {
    if (deadline.signal.aborted && isQuiverError(deadline.signal.reason)) return deadline.signal.reason;
    if (isQuiverError(error)) return error;
    const name = entry.spec.pluginName;
    if (error instanceof McpError) {
      if (error.code === McpErrorCode.ConnectionClosed || (instance && !instance.connection?.isOpen())) {
        const reason = instance?.endReason ?? 'the connection closed';
        return new QuiverError(ErrorCodes.unavailable, entry.redact(`plugin '${name}' crashed during ${what}: ${reason}`), {
          details: { reason: 'crashed', pluginId: entry.spec.pluginId },
          cause: error,
        });
      }
      if (error.code === McpErrorCode.RequestTimeout) {
        return new QuiverError(ErrorCodes.timeout, entry.redact(`plugin '${name}' did not answer ${what} in time`), { details: { pluginId: entry.spec.pluginId }, cause: error });
      }
      if (error.code === McpErrorCode.InvalidParams || error.code === McpErrorCode.MethodNotFound) {
        return new QuiverError(ErrorCodes.invalidInput, entry.redact(`plugin '${name}' rejected ${what}: ${withoutMcpErrorPrefix(error.message)}`), {
          details: { pluginId: entry.spec.pluginId, mcpCode: error.code },
          cause: error,
        });
      }
      return new QuiverError('upstream_error', entry.redact(`plugin '${name}' failed ${what}: ${withoutMcpErrorPrefix(error.message)}`), {
        kind: 'operational',
        details: { pluginId: entry.spec.pluginId, mcpCode: error.code },
        cause: error,
      });
    }
    const message = error instanceof Error ? error.message : String(error);
    if (instance && !instance.connection?.isOpen()) {
      return new QuiverError(ErrorCodes.unavailable, entry.redact(`plugin '${name}' crashed during ${what}: ${instance.endReason ?? message}`), {
        details: { reason: 'crashed', pluginId: entry.spec.pluginId },
      });
    }
    return new QuiverError('upstream_error', entry.redact(`plugin '${name}' failed ${what}: ${message}`), { kind: 'operational', details: { pluginId: entry.spec.pluginId } });
  }

  /** After a timeout: if the process no longer answers a ping, recycle it (it is hung, not slow). */
  function checkLiveness(instance: Instance): void {
    const connection = instance.connection;
    if (!connection || !connection.isOpen() || instance.state !== 'ready') return;
    connection.client.ping({ timeout: pingTimeoutMs }).then(
      () => undefined,
      () => {
        if (instance.state !== 'ready') return;
        recordCrash(instance.entry, `plugin '${instance.entry.spec.pluginName}' stopped responding (ping failed after a timeout); recycled`);
        void stopInstance(instance, 'unresponsive');
      },
    );
  }

  async function pingIdle(): Promise<void> {
    for (const instance of liveInstances()) {
      if (instance.state !== 'ready' || instance.inFlight > 0 || !instance.connection) continue;
      try {
        await instance.connection.client.ping({ timeout: pingTimeoutMs });
      } catch {
        if (instance.state !== 'ready' || instance.inFlight > 0) continue;
        recordCrash(instance.entry, `plugin '${instance.entry.spec.pluginName}' did not answer a health ping; recycled`);
        await stopInstance(instance, 'ping failed');
      }
    }
  }

  /** Runs `request` on a pooled connection within the deadline, mapping errors. */
  async function onConnection<T>(entry: Entry, deadline: Deadline, what: string, request: (connection: UpstreamConnection, signal: AbortSignal) => Promise<T>): Promise<T> {
    let instance: Instance | undefined;
    try {
      deadline.pause();
      instance = await acquireConnection(entry, deadline.signal);
      deadline.restart();
      instance.inFlight += 1;
      instance.lastUsedAt = clock.now();
      if (instance.idleTimer) clearTimeout(instance.idleTimer);
      return await request(instance.connection!, deadline.signal);
    } catch (error) {
      // Let the connection's close handler record why it ended before classifying.
      if (instance && !instance.connection?.isOpen()) await sleep(0);
      const classified = classify(entry, instance, error, deadline, what);
      if (instance && deadline.timedOut()) checkLiveness(instance);
      throw classified;
    } finally {
      if (instance) {
        instance.inFlight -= 1;
        instance.lastUsedAt = clock.now();
        scheduleIdle(instance);
      }
    }
  }

  async function annotationsFor(entry: Entry, tool: string, deadline: Deadline): Promise<Tool['annotations'] | undefined> {
    if (!entry.annotations) {
      const tools = await onConnection(entry, deadline, 'tools/list', (connection, signal) => listAllTools(connection.client, { timeoutMs: deadline.remaining() + 1_000, signal }));
      entry.annotations = new Map(tools.map((item) => [item.name, item.annotations]));
    }
    return entry.annotations.get(tool);
  }

  function emit(event: CallEvent): void {
    if (!options.onCall) return;
    try {
      options.onCall(event);
    } catch (error) {
      logger.warn({ error: (error as Error).message }, 'onCall listener threw');
    }
  }

  function retryable(error: QuiverError): boolean {
    return error.code === ErrorCodes.timeout || error.code === ErrorCodes.unavailable || error.code === 'upstream_error';
  }

  function releasePermits(permits: BreakerPermit[], pluginOutcome: 'success' | 'failure' | 'ignored', toolOutcome: 'success' | 'failure' | 'ignored'): void {
    permits[0]?.release(pluginOutcome);
    permits[1]?.release(toolOutcome);
  }

  async function callTool(specInput: UpstreamSpecInput, toolName: string, args: Record<string, unknown> = {}, callOptions: CallOptions = {}): Promise<CallToolResult> {
    ensureOpen();
    const spec = parseSpec(specInput);
    const entry = entryFor(spec);
    const startedAt = clock.now();
    let attempts = 0;
    const finish = (outcome: CallOutcome, errorClass?: string): void => {
      const latencyMs = clock.now() - startedAt;
      if (outcome !== 'rejected') {
        entry.totals.calls += 1;
        if (outcome !== 'success') entry.totals.failures += 1;
        entry.window.record({ at: clock.now(), latencyMs, ok: outcome === 'success' });
      }
      emit({ pluginId: spec.pluginId, pluginName: spec.pluginName, version: spec.version, tool: toolName, latencyMs, outcome, errorClass, attempts, at: new Date(clock.now()) });
    };
    const reject = (error: QuiverError): never => {
      finish('rejected', error.code);
      throw error;
    };

    if (inCrashLoop(entry)) reject(crashLoopError(entry));
    const permits: BreakerPermit[] = [];
    const pluginDecision = entry.pluginBreaker.tryAcquire();
    if (!pluginDecision.allowed) {
      reject(new QuiverError(ErrorCodes.circuitOpen, `plugin '${spec.pluginName}' is failing; its circuit breaker is open (retry in ${Math.ceil(pluginDecision.retryAfterMs / 1000)} s)`, {
        details: { pluginId: spec.pluginId, scope: 'plugin', retryAfterMs: pluginDecision.retryAfterMs },
      }));
    } else permits.push(pluginDecision.permit);
    const toolDecision = toolBreaker(entry, toolName).tryAcquire();
    if (!toolDecision.allowed) {
      releasePermits(permits, 'ignored', 'ignored');
      reject(new QuiverError(ErrorCodes.circuitOpen, `tool '${spec.pluginName}/${toolName}' is failing; its circuit breaker is open (retry in ${Math.ceil(toolDecision.retryAfterMs / 1000)} s)`, {
        details: { pluginId: spec.pluginId, tool: toolName, scope: 'tool', retryAfterMs: toolDecision.retryAfterMs },
      }));
    } else permits.push(toolDecision.permit);
    const buckets = [entry.limiters.pluginBucket, toolBucket(entry, toolName)].filter((bucket): bucket is TokenBucket => bucket !== undefined);
    const taken = takeAll(buckets);
    if (!taken.ok) {
      releasePermits(permits, 'ignored', 'ignored');
      reject(new QuiverError(ErrorCodes.rateLimited, `rate limit reached for '${spec.pluginName}/${toolName}'; retry in ${taken.retryAfterMs} ms`, {
        details: { pluginId: spec.pluginId, tool: toolName, retryAfterMs: taken.retryAfterMs },
      }));
    }

    const timeoutMs = callOptions.timeoutMs ?? spec.execution.timeoutRecommendation ?? defaultTimeoutMs;
    const deadline = deadlineFor(entry, `tools/call '${toolName}'`, timeoutMs, callOptions.signal);
    const releases: Array<() => void> = [];
    try {
      for (const semaphore of [entry.limiters.pluginSemaphore, toolSemaphore(entry, toolName)]) {
        if (!semaphore) continue;
        try {
          releases.push(await semaphore.acquire(deadline.signal));
        } catch (error) {
          const quiverError = isQuiverError(error) ? error : classify(entry, undefined, error, deadline, `tools/call '${toolName}'`);
          releasePermits(permits, 'ignored', 'ignored');
          if (quiverError.code === ErrorCodes.rateLimited) reject(quiverError);
          finish(quiverError.code === ErrorCodes.timeout ? 'timeout' : 'error', quiverError.code);
          throw quiverError;
        }
      }
      const policy = spec.execution.retryPolicy ?? noRetry;
      let delayMs = policy.initialDelayMs;
      for (;;) {
        attempts += 1;
        try {
          const result = (await onConnection(entry, deadline, `tools/call '${toolName}'`, (connection, signal) =>
            connection.client.callTool({ name: toolName, arguments: args }, undefined, { signal, timeout: deadline.remaining() + 1_000 }),
          )) as CallToolResult;
          entry.consecutiveCrashes = 0;
          // A tool-level error (isError) is the tool failing, not the plugin: it only moves the tool's breaker.
          releasePermits(permits, 'success', result.isError ? 'failure' : 'success');
          finish(result.isError ? 'error' : 'success', result.isError ? 'tool_error' : undefined);
          return result;
        } catch (error) {
          const quiverError = error as QuiverError;
          const userFault = quiverError.code === ErrorCodes.invalidInput || quiverError.code === 'cancelled';
          const canRetry =
            !userFault &&
            retryable(quiverError) &&
            attempts < policy.maxAttempts &&
            !deadline.signal.aborted &&
            deadline.remaining() > delayMs &&
            (await isIdempotent(entry, toolName, callOptions, deadline));
          if (canRetry) {
            logger.debug({ pluginId: spec.pluginId, tool: toolName, attempt: attempts, code: quiverError.code }, 'retrying idempotent tool call');
            await sleep(delayMs, deadline.signal);
            delayMs = Math.min(policy.maxDelayMs, delayMs * policy.backoffMultiplier);
            continue;
          }
          releasePermits(permits, userFault ? 'ignored' : 'failure', userFault ? 'ignored' : 'failure');
          finish(quiverError.code === ErrorCodes.timeout ? 'timeout' : 'error', quiverError.code);
          throw quiverError;
        }
      }
    } finally {
      for (const release of releases) release();
      deadline.dispose();
    }
  }

  async function isIdempotent(entry: Entry, tool: string, callOptions: CallOptions, deadline: Deadline): Promise<boolean> {
    // Seed 000 §3.2.3 retry policy, applied only where a repeat cannot do harm (MCP annotations).
    let annotations: { readOnlyHint?: boolean; idempotentHint?: boolean } | undefined = callOptions.annotations;
    if (!annotations) {
      try {
        annotations = await annotationsFor(entry, tool, deadline);
      } catch {
        return false;
      }
    }
    return annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
  }

  async function simpleRequest<T>(specInput: UpstreamSpecInput, what: string, callOptions: CallOptions, request: (connection: UpstreamConnection, signal: AbortSignal, remaining: () => number) => Promise<T>): Promise<T> {
    ensureOpen();
    const spec = parseSpec(specInput);
    const entry = entryFor(spec);
    if (inCrashLoop(entry)) throw crashLoopError(entry);
    const timeoutMs = callOptions.timeoutMs ?? spec.execution.timeoutRecommendation ?? defaultTimeoutMs;
    const deadline = deadlineFor(entry, what, timeoutMs, callOptions.signal);
    try {
      return await onConnection(entry, deadline, what, (connection, signal) => request(connection, signal, () => deadline.remaining() + 1_000));
    } finally {
      deadline.dispose();
    }
  }

  async function discover(specInput: UpstreamSpecInput, discoverOptions: { timeoutMs?: number } = {}): Promise<Discovery> {
    ensureOpen();
    const spec = parseSpec(specInput);
    const entry = entryFor(spec);
    const timeoutMs = discoverOptions.timeoutMs ?? startTimeoutMs + defaultTimeoutMs;
    const startedAt = clock.now();
    instanceSeq += 1;
    const deadline = deadlineFor(entry, 'discovery', timeoutMs, undefined);
    let connection: UpstreamConnection | undefined;
    const connecting = connect(entry, instanceSeq, deadline.signal).then((made) => {
      connection = made;
      discoveries.add(made);
      if (deadline.signal.aborted || closed) void made.close();
      return made;
    });
    try {
      const aborted = new Promise<never>((_, rejectPromise) => {
        const fail = (): void => rejectPromise(deadline.signal.reason);
        if (deadline.signal.aborted) fail();
        else deadline.signal.addEventListener('abort', fail, { once: true });
      });
      aborted.catch(() => undefined);
      const made = await Promise.race([connecting, aborted]);
      const listOptions = { timeoutMs: deadline.remaining() + 1_000, signal: deadline.signal };
      const [tools, resources, prompts] = await Promise.race([
        Promise.all([
          made.client.getServerCapabilities()?.tools ? listAllTools(made.client, listOptions) : Promise.resolve([]),
          listAllResources(made.client, listOptions),
          listAllPrompts(made.client, listOptions),
        ]),
        aborted,
      ]);
      return {
        serverInfo: made.client.getServerVersion(),
        capabilities: made.client.getServerCapabilities(),
        instructions: made.client.getInstructions(),
        tools,
        resources,
        prompts,
        launch: made.launch,
        durationMs: clock.now() - startedAt,
      };
    } catch (error) {
      throw classify(entry, undefined, error, deadline, 'discovery');
    } finally {
      deadline.dispose();
      connecting.catch(() => undefined);
      const made = connection ?? (await connecting.catch(() => undefined));
      if (made) {
        await made.close();
        discoveries.delete(made);
      }
    }
  }

  async function stop(pluginId: string): Promise<void> {
    const targets = [...entries.values()].filter((entry) => entry.spec.pluginId === pluginId);
    await Promise.all(targets.flatMap((entry) => [...entry.instances].map((instance) => stopInstance(instance, 'stop requested'))));
  }

  function reset(pluginId: string): void {
    for (const entry of entries.values()) {
      if (entry.spec.pluginId !== pluginId) continue;
      entry.crashLoopUntil = undefined;
      entry.crashes = [];
      entry.consecutiveCrashes = 0;
      entry.nextStartAt = 0;
      entry.pluginBreaker.reset();
      for (const breaker of entry.toolBreakers.values()) breaker.reset();
    }
  }

  function health(): PluginHealth[] {
    return [...entries.values()].map((entry) => {
      const stats = entry.window.stats();
      const crashLoop = inCrashLoop(entry);
      const ready = entry.instances.filter((instance) => instance.state === 'ready');
      const breaker = entry.pluginBreaker.state();
      let state: PluginState = 'idle';
      if (crashLoop) state = 'crash-loop';
      else if (ready.length > 0) state = 'running';
      else if (entry.instances.some((instance) => instance.state === 'starting')) state = 'starting';
      else if (entry.nextStartAt > clock.now()) state = 'backoff';
      const toolBreakers: Record<string, BreakerState> = {};
      for (const [tool, toolBreakerEntry] of entry.toolBreakers) toolBreakers[tool] = toolBreakerEntry.state();
      const pids = ready.map((instance) => instance.connection?.pid).filter((pid): pid is number => pid !== undefined);
      return {
        pluginId: entry.spec.pluginId,
        pluginName: entry.spec.pluginName,
        version: entry.spec.version,
        state,
        pid: pids[0],
        pids,
        processes: entry.instances.length,
        startedAt: entry.lastStartedAt === undefined ? undefined : new Date(entry.lastStartedAt),
        calls: entry.totals.calls,
        failures: entry.totals.failures,
        successRate: stats.successRate,
        p50LatencyMs: stats.p50LatencyMs,
        p95LatencyMs: stats.p95LatencyMs,
        breaker,
        toolBreakers,
        recentCrashes: entry.crashes.filter((at) => clock.now() - at < crashWindowMs).length,
        crashLoopUntil: entry.crashLoopUntil === undefined ? undefined : new Date(entry.crashLoopUntil),
        lastError: entry.lastError,
        launch: entry.lastLaunch,
        score: healthScore({
          stats,
          timeoutMs: entry.spec.execution.timeoutRecommendation ?? defaultTimeoutMs,
          breakerOpen: breaker === 'open',
          crashLoop,
        }),
      };
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (pingTimer) clearInterval(pingTimer);
    const all = [...entries.values()].flatMap((entry) => [...entry.instances]);
    await Promise.all([...all.map((instance) => stopInstance(instance, 'supervisor closing')), ...[...discoveries].map((connection) => connection.close())]);
    if (ownsStateRoot && stateRoot) rmSync(stateRoot, { recursive: true, force: true });
  }

  return {
    id,
    callTool,
    listTools(spec, callOptions = {}) {
      return simpleRequest(spec, 'tools/list', callOptions, async (connection, signal, remaining) => {
        const tools = await listAllTools(connection.client, { timeoutMs: remaining(), signal });
        entryFor(parseSpec(spec)).annotations = new Map(tools.map((tool) => [tool.name, tool.annotations]));
        return tools;
      });
    },
    listResources(spec, callOptions = {}) {
      return simpleRequest(spec, 'resources/list', callOptions, (connection, signal, remaining) => listAllResources(connection.client, { timeoutMs: remaining(), signal }));
    },
    readResource(spec, uri, callOptions = {}) {
      return simpleRequest(spec, 'resources/read', callOptions, (connection, signal, remaining) => connection.client.readResource({ uri }, { signal, timeout: remaining() }));
    },
    listPrompts(spec, callOptions = {}) {
      return simpleRequest(spec, 'prompts/list', callOptions, (connection, signal, remaining) => listAllPrompts(connection.client, { timeoutMs: remaining(), signal }));
    },
    getPrompt(spec, name, args, callOptions = {}) {
      return simpleRequest(spec, 'prompts/get', callOptions, (connection, signal, remaining) => connection.client.getPrompt({ name, arguments: args }, { signal, timeout: remaining() }));
    },
    discover,
    stop,
    reset,
    health,
    processes() {
      return liveInstances().map((instance) => ({ pluginId: instance.entry.spec.pluginId, version: instance.entry.spec.version, pid: instance.connection?.pid }));
    },
    host,
    close,
  };
}
