/**
 * @module runtime/health
 * Per-plugin call statistics over a sliding window (the last `windowSize` calls within
 * `windowMs`) and a 0–100 health score. The score feeds blue-green promotion and dynamic
 * trust (seed 000 §4.3, §5.1): success rate dominates, a slow p95 costs up to 20 points,
 * an open breaker halves it and a crash loop zeroes it.
 */
import type { Clock } from './types.ts';
import { percentile } from '../core/stats.ts';

/** One finished call as the window records it. */
export interface CallSample {
  at: number;
  latencyMs: number;
  ok: boolean;
}

/** Statistics over the window. */
export interface WindowStats {
  calls: number;
  failures: number;
  successRate: number;
  p50LatencyMs: number | undefined;
  p95LatencyMs: number | undefined;
}

/** A sliding window of call samples. */
export interface CallWindow {
  record(sample: CallSample): void;
  stats(): WindowStats;
}

/** Creates a window keeping at most `windowSize` samples no older than `windowMs`. */
export function createCallWindow(clock: Clock, windowSize = 200, windowMs = 300_000): CallWindow {
  const samples: CallSample[] = [];
  function prune(): void {
    const oldest = clock.now() - windowMs;
    while (samples.length > 0 && (samples.length > windowSize || samples[0]!.at < oldest)) samples.shift();
  }
  return {
    record(sample) {
      samples.push(sample);
      prune();
    },
    stats() {
      prune();
      const calls = samples.length;
      const failures = samples.filter((sample) => !sample.ok).length;
      const latencies = samples.map((sample) => sample.latencyMs).sort((a, b) => a - b);
      return {
        calls,
        failures,
        successRate: calls === 0 ? 1 : (calls - failures) / calls,
        p50LatencyMs: percentile(latencies, 0.5),
        p95LatencyMs: percentile(latencies, 0.95),
      };
    },
  };
}


/** The health score (0–100) from window stats, the call timeout, breaker state and crash-loop flag. */
export function healthScore(input: { stats: WindowStats; timeoutMs: number; breakerOpen: boolean; crashLoop: boolean }): number {
  if (input.crashLoop) return 0;
  const { stats } = input;
  const p95 = stats.p95LatencyMs ?? 0;
  // Latency costs nothing below a tenth of the timeout and everything (20 points) at the timeout.
  const slowness = Math.min(1, Math.max(0, (p95 - input.timeoutMs / 10) / (input.timeoutMs * 0.9)));
  let score = stats.successRate * 80 + (1 - slowness) * 20;
  if (stats.calls > 0 && stats.successRate === 0) score = 0;
  if (input.breakerOpen) score /= 2;
  return Math.round(Math.max(0, Math.min(100, score)));
}

export { percentile };
