/**
 * @module runtime/supervisor/admission
 * Whether a tool call may go to the plugin at all, checked in this order before any work: the
 * crash loop, the plugin's circuit breaker, the tool's breaker (seed 000 §5.2), then one token
 * from the plugin's and the tool's buckets (seed 000 §3.2.4), in memory or, for limits held
 * across replicas, in the database (replica-limits.ts). A refusal gives back the breaker
 * permits already taken without counting them, so a refused call never decides a half-open trial.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { BreakerOutcome, BreakerPermit } from '../breaker.ts';
import type { TakeResult } from '../rate-limit.ts';
import type { Entry } from './state.ts';

/** The breaker permits of an admitted call: release them once, with how the call ended. */
export interface CallPermits {
  release(pluginOutcome: BreakerOutcome, toolOutcome: BreakerOutcome): void;
}

/** Admitted with permits, or refused with the error to report (outcome `rejected`). */
export type Admission = { admitted: true; permits: CallPermits } | { admitted: false; error: QuiverError };

function permitsOf(plugin: BreakerPermit, tool: BreakerPermit): CallPermits {
  return {
    release(pluginOutcome, toolOutcome) {
      plugin.release(pluginOutcome);
      tool.release(toolOutcome);
    },
  };
}

/** Decides whether a call of `toolName` may run now; a promise only when its limits are replica-wide. */
export function admitCall(entry: Pick<Entry, 'spec' | 'crashes' | 'breakers' | 'limits'>, toolName: string): Admission | Promise<Admission> {
  const { spec } = entry;
  if (entry.crashes.inLoop()) return { admitted: false, error: entry.crashes.loopError() };
  const pluginDecision = entry.breakers.plugin.tryAcquire();
  if (!pluginDecision.allowed) {
    return {
      admitted: false,
      error: new QuiverError(ErrorCodes.circuitOpen, `plugin '${spec.pluginName}' is failing; its circuit breaker is open (retry in ${Math.ceil(pluginDecision.retryAfterMs / 1000)} s)`, {
        details: { pluginId: spec.pluginId, scope: 'plugin', retryAfterMs: pluginDecision.retryAfterMs },
      }),
    };
  }
  const toolDecision = entry.breakers.tool(toolName).tryAcquire();
  if (!toolDecision.allowed) {
    pluginDecision.permit.release('ignored');
    return {
      admitted: false,
      error: new QuiverError(ErrorCodes.circuitOpen, `tool '${spec.pluginName}/${toolName}' is failing; its circuit breaker is open (retry in ${Math.ceil(toolDecision.retryAfterMs / 1000)} s)`, {
        details: { pluginId: spec.pluginId, tool: toolName, scope: 'tool', retryAfterMs: toolDecision.retryAfterMs },
      }),
    };
  }
  const permits = permitsOf(pluginDecision.permit, toolDecision.permit);
  const settle = (taken: TakeResult): Admission => {
    if (taken.ok) return { admitted: true, permits };
    permits.release('ignored', 'ignored');
    return {
      admitted: false,
      error: new QuiverError(ErrorCodes.rateLimited, `rate limit reached for '${spec.pluginName}/${toolName}'; retry in ${taken.retryAfterMs} ms`, {
        details: { pluginId: spec.pluginId, tool: toolName, retryAfterMs: taken.retryAfterMs },
      }),
    };
  };
  const taken = entry.limits.take(toolName);
  if (!(taken instanceof Promise)) return settle(taken);
  // Replica-wide buckets (issue #16): the breaker permits go back if the database throws.
  return taken.then(settle, (error: unknown) => {
    permits.release('ignored', 'ignored');
    throw error;
  });
}
