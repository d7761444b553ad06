/**
 * @module runtime/execution-profile
 * A plugin intelligence document's execution profile (seed 000 §3.2.3) and rate limits
 * (§3.2.4 `safety.rateLimits`) turned into the runtime's `execution` settings (types.ts), with
 * the runtime's ranges checked and reported under the PID's own field names. Every launch of
 * a plugin (and every deployment slot of it) builds its execution part with `executionFromPid`;
 * `effectiveExecution` fills in the documented defaults for display. Pure.
 *
 * @example
 * const execution = executionFromPid(storedPid); // throws invalid_input naming the field
 * buildUpstreamSpec({ ...launchParts, execution });
 */
import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { formatIssues } from '../core/validation.ts';
import { circuitBreakerConfigSchema, executionSchema, RETRY_CLASSES, type CircuitBreakerConfig, type Execution, type RetryPolicy } from './types.ts';

/** What applies when neither the call, the PID nor an admin says otherwise (runtime README "Per call"). */
export const EXECUTION_DEFAULTS = Object.freeze({
  /** ms; `SupervisorOptions.defaultTimeoutMs`. */
  timeoutMs: 30_000,
  /** No retry: one attempt. */
  retryPolicy: Object.freeze({ maxAttempts: 1, initialDelayMs: 100, maxDelayMs: 2_000, backoffMultiplier: 2 }) as Readonly<RetryPolicy>,
  circuitBreaker: Object.freeze(circuitBreakerConfigSchema.parse({})) as Readonly<CircuitBreakerConfig>,
});

/**
 * The call timeout a latency bucket implies when the PID names no `timeoutRecommendation`
 * (issue #29): room for about ten times the bucket's upper end plus a process start, never
 * below the 30 s default for `moderate`; `slow` plugins get two minutes.
 */
export const TIMEOUT_BY_LATENCY = Object.freeze({ instant: 10_000, fast: 15_000, moderate: 30_000, slow: 120_000 } as const);

/**
 * The plugin-wide concurrency cap a resource level implies when neither `maxConcurrent` nor the
 * concurrency model gives one (issue #29): a `high` plugin runs two calls at a time, a `medium`
 * one eight; `low` is uncapped.
 */
export const CONCURRENCY_BY_INTENSITY = Object.freeze({ low: undefined, medium: 8, high: 2 } as const);

const positiveInt = (max: number) => z.number().int().min(1).max(max);
const nonNegativeInt = (max: number) => z.number().int().min(0).max(max);

/** The PID fields the runtime applies, with the runtime's ranges; other fields pass through untouched. */
const pidExecutionSchema = z.looseObject({
  timeoutRecommendation: positiveInt(3_600_000).optional(),
  typicalLatency: z.string().optional(),
  resourceIntensity: z.string().optional(),
  concurrencyModel: z.string().optional(),
  retryPolicy: z
    .looseObject({
      // The runtime makes at most 10 attempts (the first one and 9 retries).
      maxRetries: nonNegativeInt(9),
      backoffMs: nonNegativeInt(60_000).optional(),
      backoffMultiplier: z.number().min(1).max(10).optional(),
      maxBackoffMs: nonNegativeInt(300_000).optional(),
      // Names the runtime cannot match would never retry anything: refused with the known ones.
      retryOn: z.array(z.enum(RETRY_CLASSES, { error: `expected one of ${RETRY_CLASSES.join(', ')}` })).min(1).optional(),
    })
    .optional(),
  circuitBreakerConfig: z
    .looseObject({
      failureThreshold: positiveInt(10_000).optional(),
      successThreshold: positiveInt(10_000).optional(),
      timeout: positiveInt(86_400_000).optional(),
      halfOpenRequests: positiveInt(10_000).optional(),
    })
    .optional(),
});

const pidRateLimitsSchema = z.looseObject({
  requestsPerSecond: z.number().positive().max(100_000).optional(),
  requestsPerMinute: positiveInt(6_000_000).optional(),
  requestsPerHour: positiveInt(360_000_000).optional(),
  requestsPerDay: positiveInt(8_640_000_000).optional(),
  burst: positiveInt(1_000_000).optional(),
  maxConcurrent: positiveInt(10_000).optional(),
});

const pidProfileSchema = z.looseObject({
  execution: pidExecutionSchema.optional(),
  safety: z.looseObject({ rateLimits: pidRateLimitsSchema.optional() }).optional(),
});

type PidRateLimits = z.output<typeof pidRateLimitsSchema>;

/** The tightest of the declared windows as a sustained per-minute rate (hour and day windows become a rate). */
function requestsPerMinuteOf(limits: PidRateLimits): number | undefined {
  const rates = [
    limits.requestsPerSecond === undefined ? undefined : limits.requestsPerSecond * 60,
    limits.requestsPerMinute,
    limits.requestsPerHour === undefined ? undefined : limits.requestsPerHour / 60,
    limits.requestsPerDay === undefined ? undefined : limits.requestsPerDay / 1_440,
  ].filter((rate): rate is number => rate !== undefined);
  return rates.length === 0 ? undefined : Math.min(...rates);
}

function retryPolicyOf(retry: NonNullable<z.output<typeof pidExecutionSchema>['retryPolicy']>): RetryPolicy {
  const initialDelayMs = retry.backoffMs ?? EXECUTION_DEFAULTS.retryPolicy.initialDelayMs;
  return {
    maxAttempts: retry.maxRetries + 1,
    initialDelayMs,
    maxDelayMs: Math.max(initialDelayMs, retry.maxBackoffMs ?? EXECUTION_DEFAULTS.retryPolicy.maxDelayMs),
    backoffMultiplier: retry.backoffMultiplier ?? EXECUTION_DEFAULTS.retryPolicy.backoffMultiplier,
    ...(retry.retryOn === undefined ? {} : { retryOn: [...new Set(retry.retryOn)] }),
  };
}

/**
 * The plugin-wide concurrency cap: `maxConcurrent`, and 1 for a `sequential` or `exclusive`
 * plugin; with neither, what its resource intensity implies.
 */
function concurrencyCapOf(model: string | undefined, maxConcurrent: number | undefined, intensity: string | undefined): number | undefined {
  const modelCap = model === 'sequential' || model === 'exclusive' ? 1 : undefined;
  const caps = [modelCap, maxConcurrent].filter((cap): cap is number => cap !== undefined);
  if (caps.length > 0) return Math.min(...caps);
  return intensity !== undefined && Object.hasOwn(CONCURRENCY_BY_INTENSITY, intensity) ? CONCURRENCY_BY_INTENSITY[intensity as keyof typeof CONCURRENCY_BY_INTENSITY] : undefined;
}

/** The call timeout: the PID's recommendation, else what its latency bucket implies, else none (the default applies). */
function timeoutOf(execution: { timeoutRecommendation?: number | undefined; typicalLatency?: string | undefined }): number | undefined {
  if (execution.timeoutRecommendation !== undefined) return execution.timeoutRecommendation;
  const latency = execution.typicalLatency;
  return latency !== undefined && Object.hasOwn(TIMEOUT_BY_LATENCY, latency) ? TIMEOUT_BY_LATENCY[latency as keyof typeof TIMEOUT_BY_LATENCY] : undefined;
}

/**
 * The runtime execution settings a PID declares; `{}` for no PID (every default applies).
 * Throws `invalid_input` naming each out-of-range field by its PID path, e.g.
 * `execution.timeoutRecommendation: Too small: expected number to be >=1`.
 */
export function executionFromPid(pid: unknown): Execution {
  if (pid === undefined || pid === null) return {};
  const parsed = pidProfileSchema.safeParse(pid);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw invalidInput(`the intelligence document's execution profile cannot be applied: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`, {
      issues,
    });
  }
  const execution = parsed.data.execution ?? {};
  const rate = parsed.data.safety?.rateLimits ?? {};
  const requestsPerMinute = requestsPerMinuteOf(rate);
  const cap = concurrencyCapOf(execution.concurrencyModel, rate.maxConcurrent, execution.resourceIntensity);
  const timeout = timeoutOf(execution);
  const breaker = execution.circuitBreakerConfig;
  return executionSchema.parse({
    ...(timeout === undefined ? {} : { timeoutRecommendation: timeout }),
    ...(execution.retryPolicy === undefined ? {} : { retryPolicy: retryPolicyOf(execution.retryPolicy) }),
    ...(breaker === undefined
      ? {}
      : {
          circuitBreakerConfig: {
            ...(breaker.failureThreshold === undefined ? {} : { failureThreshold: breaker.failureThreshold }),
            ...(breaker.successThreshold === undefined ? {} : { successThreshold: breaker.successThreshold }),
            ...(breaker.timeout === undefined ? {} : { timeout: breaker.timeout }),
            ...(breaker.halfOpenRequests === undefined ? {} : { halfOpenRequests: breaker.halfOpenRequests }),
          },
        }),
    ...(requestsPerMinute === undefined ? {} : { rateLimits: { plugin: { requestsPerMinute, ...(rate.burst === undefined ? {} : { burst: rate.burst }) } } }),
    ...(cap === undefined ? {} : { concurrency: { plugin: cap } }),
  });
}

/** The profile in effect for a plugin, every default filled in, with the fields the PID set. */
export interface EffectiveExecution {
  timeoutMs: number;
  retryPolicy: RetryPolicy;
  circuitBreaker: CircuitBreakerConfig;
  /** Plugin-wide token bucket, null when unlimited. */
  rateLimit: { requestsPerMinute: number; burst: number } | null;
  /** Plugin-wide calls in flight, null when uncapped. */
  maxConcurrent: number | null;
  /** Fields the PID set; the others are defaults. */
  fromPid: string[];
}

/** `execution` with the documented defaults where it is silent (what `plugin show` reports). */
export function effectiveExecution(execution: Execution): EffectiveExecution {
  const bucket = execution.rateLimits?.plugin;
  const fromPid = (['timeoutRecommendation', 'retryPolicy', 'circuitBreakerConfig', 'rateLimits', 'concurrency'] as const).filter((key) => execution[key] !== undefined);
  return {
    timeoutMs: execution.timeoutRecommendation ?? EXECUTION_DEFAULTS.timeoutMs,
    retryPolicy: execution.retryPolicy ?? { ...EXECUTION_DEFAULTS.retryPolicy },
    circuitBreaker: circuitBreakerConfigSchema.parse({ ...EXECUTION_DEFAULTS.circuitBreaker, ...execution.circuitBreakerConfig }),
    rateLimit: bucket === undefined ? null : { requestsPerMinute: bucket.requestsPerMinute, burst: bucket.burst ?? Math.max(1, Math.ceil(bucket.requestsPerMinute / 60)) },
    maxConcurrent: execution.concurrency?.plugin ?? null,
    fromPid,
  };
}
