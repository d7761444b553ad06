/**
 * @module gateway/iteration-guard
 * Loop detection by eviction, not blocking (seed 004 §7). The gateway always runs the call,
 * then records it here; when the same (tool, normalised-argument hash) pair repeats more than
 * a threshold within a time window (§7.2 time-based counter) or within the last N calls
 * (§7.2 sliding window, which catches A→B→A→B loops), the verdict says to evict the tool and
 * append guidance to its result (§7.3). Exempt tools are never counted (§7.4). A new search
 * resets the counters of what it re-discovers (§7.5). Pure: time comes from an injected clock.
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../core/hash.ts';

export interface IterationGuardOptions {
  /** Time window of the per-pair counter, ms. */
  windowMs: number;
  /** A pair called more than this many times inside `windowMs` is a loop. */
  maxCallsInWindow: number;
  /** How many recent calls the sliding window holds. */
  slidingWindowSize: number;
  /** A pair appearing more than this many times in the sliding window is a loop. */
  maxInSlidingWindow: number;
  /** Tools that may repeat freely (memory, knowledge-base, planning tools; §7.4). */
  exemptTools?: readonly string[];
  now: () => number;
}

/** Default thresholds: the 4th identical call within a minute, or 4 of the last 10 calls. */
export const DEFAULT_GUARD_OPTIONS: Omit<IterationGuardOptions, 'now'> = Object.freeze({
  windowMs: 60_000,
  maxCallsInWindow: 3,
  slidingWindowSize: 10,
  maxInSlidingWindow: 3,
  exemptTools: [],
});

/** What the guard says about one call. */
export type GuardVerdict =
  | { loop: false; count: number }
  | { loop: true; reason: 'time-window' | 'sliding-window'; count: number; argumentHash: string };

const TRACKING_PARAMETERS = /^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid|ref_src)$/i;
const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/i;

/**
 * Normalises a URL so trivial variations collapse (§7.2): lowercase scheme and host, default
 * port dropped, trailing slash dropped, fragment dropped, tracking parameters dropped, query
 * parameters sorted. Anything that does not parse is returned trimmed.
 */
export function normalizeUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  url.hash = '';
  const parameters = [...url.searchParams.entries()]
    .filter(([key]) => !TRACKING_PARAMETERS.test(key))
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1));
  url.search = '';
  for (const [key, value] of parameters) url.searchParams.append(key, value);
  let out = url.toString();
  if (url.search === '' && out.endsWith('/')) out = out.replace(/\/+$/, '');
  else out = out.replace(/\/+\?/, '?');
  return out;
}

/**
 * Normalises tool arguments before hashing: object keys in canonical order (by canonical
 * JSON), strings trimmed with inner whitespace collapsed, URL strings normalised. Case is
 * kept: for most tools `Report.pdf` and `report.pdf` are different targets.
 */
export function normalizeArguments(value: unknown): unknown {
  if (typeof value === 'string') {
    const trimmed = value.trim().replace(/\s+/g, ' ');
    return URL_PATTERN.test(trimmed) ? normalizeUrl(trimmed) : trimmed;
  }
  if (Array.isArray(value)) return value.map((item) => normalizeArguments(item));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
      if (member === undefined) continue;
      out[key] = normalizeArguments(member);
    }
    return out;
  }
  return value;
}

/**
 * A short stable hash of normalised arguments: the first 16 hex digits of the SHA-256 of their
 * canonical JSON. One-shot `crypto.hash`, not a `Hash` object per call (issue #28: it runs on
 * every gateway call; same digest).
 */
export function hashArguments(args: unknown): string {
  return hash('sha256', canonicalJson(normalizeArguments(args ?? {})), 'hex').slice(0, 16);
}

/** The guard's counters as plain data. */
export interface IterationGuardSnapshot {
  /** [tool, argument hash, call times]. */
  times: Array<[string, string, number[]]>;
  /** The sliding window's [tool, argument hash] pairs, oldest first. */
  window: Array<[string, string]>;
}

/** Per-session loop detector. */
export class IterationGuard {
  readonly #options: Readonly<Required<IterationGuardOptions>>;
  readonly #exempt: ReadonlySet<string>;
  /**
   * Call times per pair key, oldest first, at most `maxCallsInWindow + 1` long. The map is kept
   * in order of each pair's last call (a recorded pair moves to the end), so expiry stops at the
   * first pair still in the window instead of walking every pair on every call (issue #28).
   */
  readonly #times = new Map<string, number[]>();
  /** The most recent pair keys, oldest first. */
  readonly #window: string[] = [];

  constructor(options: IterationGuardOptions) {
    for (const key of ['windowMs', 'maxCallsInWindow', 'slidingWindowSize', 'maxInSlidingWindow'] as const) {
      if (!(options[key] > 0)) throw new RangeError(`${key} must be positive`);
    }
    this.#options = Object.freeze({ exemptTools: [], ...options });
    this.#exempt = new Set(this.#options.exemptTools);
  }

  /** True when the tool is never counted. */
  isExempt(toolName: string): boolean {
    return this.#exempt.has(toolName);
  }

  /** Records a completed call and says whether it closes a loop. */
  record(toolName: string, args: unknown): GuardVerdict {
    if (this.#exempt.has(toolName)) return { loop: false, count: 0 };
    const now = this.#options.now();
    const argumentHash = hashArguments(args);
    const key = `${toolName}\u0000${argumentHash}`;
    this.#collectGarbage(now);

    const times = this.#times.get(key) ?? [];
    times.push(now);
    while (times.length > this.#options.maxCallsInWindow + 1) times.shift();
    this.#times.delete(key);
    this.#times.set(key, times);

    this.#window.push(key);
    while (this.#window.length > this.#options.slidingWindowSize) this.#window.shift();

    // Counted in place, not by filtering into new arrays (this runs on every gateway call).
    let inTime = 0;
    for (const at of times) if (now - at <= this.#options.windowMs) inTime += 1;
    if (inTime > this.#options.maxCallsInWindow) return { loop: true, reason: 'time-window', count: inTime, argumentHash };
    let inWindow = 0;
    for (const entry of this.#window) if (entry === key) inWindow += 1;
    if (inWindow > this.#options.maxInSlidingWindow) return { loop: true, reason: 'sliding-window', count: inWindow, argumentHash };
    return { loop: false, count: Math.max(inTime, inWindow) };
  }

  /** Forgets a tool's history (it was re-discovered by a search, §7.5); all tools when omitted. */
  reset(toolName?: string): void {
    if (toolName === undefined) {
      this.#times.clear();
      this.#window.length = 0;
      return;
    }
    const prefix = `${toolName}\u0000`;
    for (const key of [...this.#times.keys()]) if (key.startsWith(prefix)) this.#times.delete(key);
    for (let index = this.#window.length - 1; index >= 0; index -= 1) {
      if (this.#window[index]!.startsWith(prefix)) this.#window.splice(index, 1);
    }
  }

  /**
   * The counters as plain data (issue #16: shared sessions). Pairs are [tool, argument hash]:
   * the in-memory key's NUL separator cannot be stored in a PostgreSQL jsonb value.
   */
  snapshot(): IterationGuardSnapshot {
    const pair = (key: string) => key.split('\u0000') as [string, string];
    return {
      times: [...this.#times.entries()].map(([key, times]) => [...pair(key), [...times]]),
      window: this.#window.map(pair),
    };
  }

  /** Replaces the counters with a snapshot's. */
  restore(snapshot: IterationGuardSnapshot): void {
    this.#times.clear();
    // In order of each pair's last call (see #times), whatever order the snapshot had.
    const pairs = snapshot.times.map(([tool, hash, times]): [string, number[]] => [`${tool}\u0000${hash}`, [...times]]);
    pairs.sort((a, b) => (a[1].at(-1) ?? 0) - (b[1].at(-1) ?? 0));
    for (const [key, times] of pairs) this.#times.set(key, times);
    this.#window.length = 0;
    for (const [tool, hash] of snapshot.window.slice(-this.#options.slidingWindowSize)) this.#window.push(`${tool}\u0000${hash}`);
  }

  /** Number of pairs tracked by the time counter (for tests of the garbage collection). */
  get trackedPairs(): number {
    return this.#times.size;
  }

  #collectGarbage(now: number): void {
    for (const [key, times] of this.#times) {
      const last = times[times.length - 1];
      if (last !== undefined && now - last <= this.#options.windowMs) return; // every later pair was called later still
      this.#times.delete(key);
    }
  }
}

/**
 * The guidance appended to a looping tool's result (§7.3): why it was removed, that the
 * result is still valid, and how to continue. `specific` is the deployment's tool-specific
 * advice, when it has some.
 */
export function loopGuidance(options: {
  toolName: string;
  verdict: Extract<GuardVerdict, { loop: true }>;
  windowMs: number;
  mode: 'search' | 'still' | 'capabilities' | 'all';
  specific?: string;
}): string {
  const { toolName, verdict, windowMs, mode, specific } = options;
  const seen =
    verdict.reason === 'time-window'
      ? `${verdict.count} times with the same arguments within ${Math.round(windowMs / 1000)} s`
      : `${verdict.count} times with the same arguments among your most recent tool calls`;
  const next =
    mode === 'search'
      ? `It has been removed from your tool list. Do not repeat the same call: reconsider the result above, try a different approach, or call search_tools to find a different tool (searching for it again re-enables it).`
      : mode === 'capabilities'
        ? `It has been removed from your tool list. Do not repeat the same call: reconsider the result above or try a different approach; call load_capability again only if you really need it.`
        : mode === 'still'
          ? `Further calls to it are refused until your next search_tools. Do not repeat the same call: reconsider the result above, try a different approach, or search for a different tool (searching for it again re-enables it).`
          : `Do not repeat the same call: reconsider the result above or try a different approach.`;
  return [
    `[quiver] Loop detected: '${toolName}' was called ${seen}. The result above is valid.`,
    next,
    ...(specific ? [specific] : []),
  ].join(' ');
}
