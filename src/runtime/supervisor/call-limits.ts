/**
 * @module runtime/supervisor/call-limits
 * The rate limits (seed 000 §3.2.4) and concurrency caps of one plugin version's settings:
 * a token bucket and a semaphore for the plugin, and per tool the named tool's own or the
 * `perTool` default, made on first use and shared by every later call of that tool.
 */
import { createTokenBucket, type TokenBucket } from '../rate-limit.ts';
import { createSemaphore, type Semaphore } from '../semaphore.ts';
import type { Clock, UpstreamSpec } from '../types.ts';

/** The limiters a call of a tool passes, plugin's first. */
export interface CallLimits {
  /** Token buckets the call takes one token from (none when unlimited). */
  buckets(tool: string): TokenBucket[];
  /** Semaphores the call holds a slot of while it runs (none when uncapped). */
  semaphores(tool: string): Semaphore[];
}

/** Creates the limiters of `spec.execution` (new settings get new limiters). */
export function createCallLimits(spec: UpstreamSpec, clock: Clock): CallLimits {
  const rate = spec.execution.rateLimits;
  const concurrency = spec.execution.concurrency;
  const pluginBucket = rate?.plugin ? createTokenBucket(rate.plugin, clock) : undefined;
  const pluginSemaphore = concurrency?.plugin ? createSemaphore(concurrency.plugin, concurrency.maxQueue, `plugin '${spec.pluginName}'`) : undefined;
  // `null` remembers "this tool has no limiter" so the lookup is not repeated on every call.
  const toolBuckets = new Map<string, TokenBucket | null>();
  const toolSemaphores = new Map<string, Semaphore | null>();

  function toolBucket(tool: string): TokenBucket | undefined {
    const cached = toolBuckets.get(tool);
    if (cached !== undefined) return cached ?? undefined;
    const config = rate?.tools[tool] ?? rate?.perTool;
    const bucket = config ? createTokenBucket(config, clock) : undefined;
    toolBuckets.set(tool, bucket ?? null);
    return bucket;
  }

  function toolSemaphore(tool: string): Semaphore | undefined {
    const cached = toolSemaphores.get(tool);
    if (cached !== undefined) return cached ?? undefined;
    const limit = concurrency?.tools[tool] ?? concurrency?.perTool;
    const semaphore = limit && concurrency ? createSemaphore(limit, concurrency.maxQueue, `tool '${spec.pluginName}/${tool}'`) : undefined;
    toolSemaphores.set(tool, semaphore ?? null);
    return semaphore;
  }

  return {
    buckets: (tool) => [pluginBucket, toolBucket(tool)].filter((bucket): bucket is TokenBucket => bucket !== undefined),
    semaphores: (tool) => [pluginSemaphore, toolSemaphore(tool)].filter((semaphore): semaphore is Semaphore => semaphore !== undefined),
  };
}
