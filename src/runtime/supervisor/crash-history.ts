/**
 * @module runtime/supervisor/crash-history
 * The crash record of one plugin version (seed 003 "Error Handling": restart with exponential
 * backoff, stop restarting a plugin that keeps crashing): each crash pushes the next start
 * back (initial delay doubling up to a maximum); `maxCrashes` within `windowMs` is a crash
 * loop, which refuses starts and calls for `cooldownMs` or until an admin resets it.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Clock } from '../types.ts';
import type { SupervisorSettings } from './settings.ts';

/** Names the plugin in errors and log lines (read at the time, since settings may change). */
export interface CrashSubject {
  pluginId: string;
  pluginName: string;
  version: string;
}

/** Crashes, backoff and crash-loop state of one plugin version. */
export interface CrashHistory {
  /** True while in a crash loop; a loop whose cooldown has passed is cleared here. */
  inLoop(): boolean;
  /** The `unavailable` error refusing work during a crash loop. */
  loopError(): QuiverError;
  /** Counts a crash: sets the backoff and, at `maxCrashes` within the window, the crash loop. */
  record(reason: string): void;
  /** A call succeeded: the next crash backs off from the initial delay again. */
  succeeded(): void;
  /** Notes why a start failed without counting it as a crash (e.g. no sandbox on this host). */
  noteError(message: string): void;
  /** Forgets every crash, the backoff and the loop (admin reset). */
  reset(): void;
  /** ms until a restart may begin; 0 when there is no backoff. */
  backoffRemaining(): number;
  /** Crashes within the window. */
  recentCount(): number;
  loopUntil(): number | undefined;
  lastError(): string | undefined;
}

/** Creates an empty crash history; `subject` is read whenever a message names the plugin. */
export function createCrashHistory(subject: () => CrashSubject, settings: Pick<SupervisorSettings, 'backoff' | 'crashLoop'>, clock: Clock, logger: Logger): CrashHistory {
  const { maxCrashes, windowMs, cooldownMs } = settings.crashLoop;
  let crashes: number[] = [];
  let consecutive = 0;
  let nextStartAt = 0;
  let loopUntil: number | undefined;
  let lastError: string | undefined;

  return {
    inLoop() {
      if (loopUntil === undefined) return false;
      if (clock.now() < loopUntil) return true;
      loopUntil = undefined;
      crashes = [];
      consecutive = 0;
      return false;
    },
    loopError() {
      const { pluginId, pluginName } = subject();
      return new QuiverError(
        ErrorCodes.unavailable,
        `plugin '${pluginName}' is in a crash loop (${maxCrashes} crashes within ${Math.round(windowMs / 1000)} s) and is not restarted until ${new Date(loopUntil ?? 0).toISOString()} or an admin resets it; last error: ${lastError ?? 'unknown'}`,
        { details: { reason: 'crash_loop', pluginId, until: loopUntil } },
      );
    },
    record(reason) {
      const now = clock.now();
      const { pluginId, version } = subject();
      lastError = reason;
      crashes = crashes.filter((at) => now - at < windowMs);
      crashes.push(now);
      consecutive += 1;
      nextStartAt = now + Math.min(settings.backoff.maxMs, settings.backoff.initialMs * 2 ** (consecutive - 1));
      if (crashes.length >= maxCrashes && loopUntil === undefined) {
        loopUntil = now + cooldownMs;
        logger.error({ pluginId, version, crashes: crashes.length }, 'plugin is in a crash loop; not restarting it');
      } else {
        logger.warn({ pluginId, version, reason, backoffMs: nextStartAt - now }, 'plugin process failed');
      }
    },
    succeeded() {
      consecutive = 0;
    },
    noteError(message) {
      lastError = message;
    },
    reset() {
      loopUntil = undefined;
      crashes = [];
      consecutive = 0;
      nextStartAt = 0;
    },
    backoffRemaining: () => Math.max(0, nextStartAt - clock.now()),
    recentCount: () => crashes.filter((at) => clock.now() - at < windowMs).length,
    loopUntil: () => loopUntil,
    lastError: () => lastError,
  };
}
