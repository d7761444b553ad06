/**
 * @module runtime/supervisor/settings
 * `SupervisorOptions` with every default filled in, once, so that each part reads one frozen
 * settings object instead of repeating `options.x ?? default`. The defaults follow seed 003
 * "Performance and Connection Management" (warm connections, idle shutdown, backoff).
 */
import { EXECUTION_DEFAULTS } from '../execution-profile.ts';
import type { CircuitBreakerConfig, UpstreamSpec } from '../types.ts';
import type { SupervisorOptions } from './api.ts';

/** The supervisor's options with defaults applied (sandbox options stay with the launcher). */
export interface SupervisorSettings {
  readonly poolSize: number;
  /** Most processes of one plugin version (calls paused on a 2026 client's input may need more than `poolSize`). */
  readonly maxPoolSize: number;
  readonly maxProcesses: number;
  readonly idleTimeoutMs: number;
  readonly defaultTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly stopGraceMs: number;
  /** 0 when idle connections are not pinged. */
  readonly pingIntervalMs: number;
  readonly pingTimeoutMs: number;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly crashLoop: { readonly maxCrashes: number; readonly windowMs: number; readonly cooldownMs: number };
  readonly breakerDefaults: Partial<CircuitBreakerConfig> | undefined;
  /** Passed to `createCallWindow`, whose own defaults apply to unset fields. */
  readonly healthWindow: { readonly size?: number; readonly ms?: number };
}

/** Fills in the defaults of `options` (pool size clamped to 1…maxPoolSize, process cap at least 1). */
export function resolveSettings(options: SupervisorOptions): SupervisorSettings {
  const maxPoolSize = options.maxPoolSize ?? 8;
  return Object.freeze({
    poolSize: Math.max(1, Math.min(options.poolSize ?? 1, maxPoolSize)),
    maxPoolSize: Math.max(1, maxPoolSize),
    maxProcesses: Math.max(1, options.maxProcesses ?? 32),
    idleTimeoutMs: options.idleTimeoutMs ?? 300_000,
    defaultTimeoutMs: options.defaultTimeoutMs ?? EXECUTION_DEFAULTS.timeoutMs,
    startTimeoutMs: options.startTimeoutMs ?? 15_000,
    stopGraceMs: options.stopGraceMs ?? 1_000,
    pingIntervalMs: options.pingIntervalMs && options.pingIntervalMs > 0 ? options.pingIntervalMs : 0,
    pingTimeoutMs: options.pingTimeoutMs ?? 2_000,
    backoff: Object.freeze({ initialMs: options.restartBackoff?.initialMs ?? 200, maxMs: options.restartBackoff?.maxMs ?? 10_000 }),
    crashLoop: Object.freeze({
      maxCrashes: options.crashLoop?.maxCrashes ?? 5,
      windowMs: options.crashLoop?.windowMs ?? 60_000,
      cooldownMs: options.crashLoop?.cooldownMs ?? 300_000,
    }),
    breakerDefaults: options.breakerDefaults,
    healthWindow: Object.freeze({ size: options.healthWindow?.size, ms: options.healthWindow?.ms }),
  });
}

/** A request's timeout: the call's own, else the PID's `timeoutRecommendation`, else the default. */
export function requestTimeoutMs(spec: UpstreamSpec, settings: Pick<SupervisorSettings, 'defaultTimeoutMs'>, requested?: number): number {
  return requested ?? spec.execution.timeoutRecommendation ?? settings.defaultTimeoutMs;
}
