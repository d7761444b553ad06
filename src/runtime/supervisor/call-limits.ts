/**
 * @module runtime/supervisor/call-limits
 * The rate limits (seed 000 §3.2.4) and concurrency caps of one plugin version's settings:
 * a token bucket and a semaphore for the plugin, and per tool the named tool's own or the
 * `perTool` default, made on first use and shared by every later call of that tool. Given the
 * replica-wide limiters (PostgreSQL, issue #16), declared limits are taken there instead, keyed
 * by plugin id (so every version and deployment slot of a plugin shares them); the in-memory
 * buckets stay as the fallback when the database cannot answer.
 */
import { createTokenBucket, takeAll, type TakeResult, type TokenBucket } from '../rate-limit.ts';
import { createSemaphore, type Semaphore } from '../semaphore.ts';
import type { ScopedBucket, SharedLimits } from '../replica-limits.ts';
import type { BucketConfig, Clock, UpstreamSpec } from '../types.ts';

/** The limiters a call of a tool passes, plugin's first. */
export interface CallLimits {
  /** This replica's token buckets the call takes one token from (none when unlimited). */
  buckets(tool: string): TokenBucket[];
  /** Takes a token from each of the tool's buckets, replica-wide when shared (a promise only then). */
  take(tool: string): TakeResult | Promise<TakeResult>;
  /** Semaphores the call holds a slot of while it runs (none when uncapped). */
  semaphores(tool: string): Semaphore[];
}

/** Creates the limiters of `spec.execution` (new settings get new limiters); `shared` holds them across replicas. */
export function createCallLimits(spec: UpstreamSpec, clock: Clock, shared?: SharedLimits): CallLimits {
  const rate = spec.execution.rateLimits;
  const concurrency = spec.execution.concurrency;
  const pluginBucket = rate?.plugin ? createTokenBucket(rate.plugin, clock) : undefined;
  const pluginLabel = `plugin '${spec.pluginName}'`;
  const pluginSemaphore = concurrency?.plugin
    ? shared
      ? shared.semaphore(spec.pluginId, concurrency.plugin, concurrency.maxQueue, pluginLabel)
      : createSemaphore(concurrency.plugin, concurrency.maxQueue, pluginLabel)
    : undefined;
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
    const label = `tool '${spec.pluginName}/${tool}'`;
    const semaphore =
      limit && concurrency
        ? shared
          ? shared.semaphore(`${spec.pluginId}/${tool}`, limit, concurrency.maxQueue, label)
          : createSemaphore(limit, concurrency.maxQueue, label)
        : undefined;
    toolSemaphores.set(tool, semaphore ?? null);
    return semaphore;
  }

  const buckets = (tool: string): TokenBucket[] => [pluginBucket, toolBucket(tool)].filter((bucket): bucket is TokenBucket => bucket !== undefined);

  /** The declared buckets of a tool call, named for the shared table. */
  function scopedBuckets(tool: string): ScopedBucket[] {
    const toolConfig: BucketConfig | undefined = rate?.tools[tool] ?? rate?.perTool;
    return [
      ...(rate?.plugin ? [{ scope: spec.pluginId, config: rate.plugin }] : []),
      ...(toolConfig ? [{ scope: `${spec.pluginId}/${tool}`, config: toolConfig }] : []),
    ];
  }

  return {
    buckets,
    take(tool) {
      const local = buckets(tool);
      if (local.length === 0) return { ok: true };
      if (!shared) return takeAll(local);
      return shared.take(scopedBuckets(tool), () => takeAll(local));
    },
    semaphores: (tool) => [pluginSemaphore, toolSemaphore(tool)].filter((semaphore): semaphore is Semaphore => semaphore !== undefined),
  };
}
