/**
 * @module gateway/tool-context
 * A session's bound tools (seed 004 §6, "ToolContextManager"): always-include tools that
 * never count toward capacity and are never evicted, plus dynamically discovered tools kept
 * within a capacity by TTL-then-LRU eviction. Binding is idempotent: binding a bound tool
 * only refreshes its last-use time (§5.2). Pure: time comes from an injected clock.
 */

/** Anything with a qualified name can be bound. */
export interface Bindable {
  qualifiedName: string;
}

/** One discovered tool in the context (seed 004 §6.1). */
export interface ToolContextEntry<T extends Bindable> {
  tool: T;
  discoveredAt: number;
  lastUsedAt: number;
  useCount: number;
  /** Tie-breaker between equal timestamps: higher is more recent (or better ranked). */
  sequence: number;
}

export interface ToolContextOptions {
  /** Most discovered tools held at once (always-include tools do not count). */
  capacity: number;
  /** A discovered tool unused for this long is the first to go when over capacity. */
  ttlMs: number;
  /** Milliseconds since any epoch. */
  now: () => number;
}

/**
 * One discovered tool as plain data: its name and bookkeeping, not its definition (issue #28:
 * the definitions made most of a stored session's bytes, serialised on every write; a copy
 * restoring the state looks them up again, as they are now).
 */
export interface ToolContextSnapshotEntry {
  name: string;
  discoveredAt: number;
  lastUsedAt: number;
  useCount: number;
  sequence: number;
}

/** The discovered part of a context as plain data, in discovery order. */
export interface ToolContextSnapshot {
  sequence: number;
  discovered: ToolContextSnapshotEntry[];
}

/** The name of a snapshot entry; rows written before issue #28 carry the whole tool instead. */
export function snapshotEntryName(entry: unknown): string | undefined {
  const fields = entry as { name?: unknown; tool?: { qualifiedName?: unknown } } | null;
  const name = fields?.name ?? fields?.tool?.qualifiedName;
  return typeof name === 'string' ? name : undefined;
}

/** What a bind changed. */
export interface BindResult {
  added: string[];
  refreshed: string[];
  evicted: string[];
}

/** The bounded tool context of one session. */
export class ToolContext<T extends Bindable> {
  readonly #options: Readonly<ToolContextOptions>;
  readonly #always = new Map<string, T>();
  readonly #discovered = new Map<string, ToolContextEntry<T>>();
  #sequence = 0;

  constructor(options: ToolContextOptions) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) throw new RangeError('capacity must be a positive integer');
    if (!(options.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    this.#options = Object.freeze({ ...options });
  }

  /** Capacity for discovered tools. */
  get capacity(): number {
    return this.#options.capacity;
  }

  /**
   * Replaces the always-include set (seed 004 §6.2). A discovered tool that becomes
   * always-include moves out of the discovered set, freeing its slot.
   */
  setAlwaysInclude(tools: readonly T[]): void {
    this.#always.clear();
    for (const tool of tools) {
      this.#always.set(tool.qualifiedName, tool);
      this.#discovered.delete(tool.qualifiedName);
    }
  }

  /**
   * Binds tools, best-ranked first. Already bound tools are refreshed, not duplicated; when
   * the discovered set then exceeds capacity, TTL then LRU eviction runs (§6.3). Within one
   * batch the earlier (better-ranked) tools count as more recent, so a batch larger than the
   * capacity keeps its best tools.
   */
  bind(tools: readonly T[]): BindResult {
    const now = this.#options.now();
    const added: string[] = [];
    const refreshed: string[] = [];
    const seen = new Set<string>();
    // Sequence numbers run from the worst-ranked to the best, so the best counts as most recent.
    const batch = tools.filter((tool) => {
      if (seen.has(tool.qualifiedName) || this.#always.has(tool.qualifiedName)) return false;
      seen.add(tool.qualifiedName);
      return true;
    });
    const base = this.#sequence;
    this.#sequence += batch.length;
    batch.forEach((tool, index) => {
      const sequence = base + batch.length - index;
      const existing = this.#discovered.get(tool.qualifiedName);
      if (existing) {
        existing.tool = tool;
        existing.lastUsedAt = now;
        existing.sequence = sequence;
        refreshed.push(tool.qualifiedName);
      } else {
        this.#discovered.set(tool.qualifiedName, { tool, discoveredAt: now, lastUsedAt: now, useCount: 0, sequence });
        added.push(tool.qualifiedName);
      }
    });
    const evicted = this.#enforceCapacity(now);
    return {
      added: added.filter((name) => !evicted.includes(name)),
      refreshed: refreshed.filter((name) => !evicted.includes(name)),
      evicted,
    };
  }

  /** Records a use: updates the LRU timestamp and use count. False when the tool is not discovered here. */
  touch(qualifiedName: string): boolean {
    const entry = this.#discovered.get(qualifiedName);
    if (!entry) return false;
    entry.lastUsedAt = this.#options.now();
    entry.useCount += 1;
    entry.sequence = ++this.#sequence;
    return true;
  }

  /** Removes a discovered tool (the iteration guard's eviction). Always-include tools stay. */
  evict(qualifiedName: string): boolean {
    return this.#discovered.delete(qualifiedName);
  }

  /** True when the tool is bound (always-include or discovered). */
  has(qualifiedName: string): boolean {
    return this.#always.has(qualifiedName) || this.#discovered.has(qualifiedName);
  }

  /** True when the tool is in the always-include set. */
  isAlwaysIncluded(qualifiedName: string): boolean {
    return this.#always.has(qualifiedName);
  }

  /** A bound tool by name. */
  get(qualifiedName: string): T | undefined {
    return this.#always.get(qualifiedName) ?? this.#discovered.get(qualifiedName)?.tool;
  }

  /** The discovered entry (timestamps, use count) of a tool. */
  entry(qualifiedName: string): Readonly<ToolContextEntry<T>> | undefined {
    return this.#discovered.get(qualifiedName);
  }

  /** Every bound tool: always-include first, then discovered in discovery order. */
  list(): T[] {
    return [...this.#always.values(), ...[...this.#discovered.values()].map((entry) => entry.tool)];
  }

  /** The always-include tools only, in the order they were set. */
  alwaysIncluded(): T[] {
    return [...this.#always.values()];
  }

  /** Number of discovered tools (what capacity bounds). */
  get discoveredCount(): number {
    return this.#discovered.size;
  }

  /** Number of always-include tools. */
  get alwaysCount(): number {
    return this.#always.size;
  }

  /** The discovered tools' names with their timestamps and order, as plain data (issue #16: shared sessions). */
  snapshot(): ToolContextSnapshot {
    const discovered: ToolContextSnapshotEntry[] = [];
    for (const entry of this.#discovered.values()) {
      discovered.push({ name: entry.tool.qualifiedName, discoveredAt: entry.discoveredAt, lastUsedAt: entry.lastUsedAt, useCount: entry.useCount, sequence: entry.sequence });
    }
    return { sequence: this.#sequence, discovered };
  }

  /**
   * Replaces the discovered tools with a snapshot's (always-include tools are not part of one).
   * `resolve` gives each name's definition; a name it does not know (the tool is gone, or no
   * longer visible to this session) is dropped.
   */
  restore(snapshot: ToolContextSnapshot, resolve: (qualifiedName: string) => T | undefined): void {
    this.#discovered.clear();
    for (const entry of snapshot.discovered) {
      const name = snapshotEntryName(entry);
      if (name === undefined || this.#always.has(name)) continue;
      const tool = resolve(name);
      if (tool === undefined) continue;
      this.#discovered.set(name, { tool, discoveredAt: entry.discoveredAt, lastUsedAt: entry.lastUsedAt, useCount: entry.useCount, sequence: entry.sequence });
    }
    this.#sequence = snapshot.sequence;
  }

  #enforceCapacity(now: number): string[] {
    const { capacity, ttlMs } = this.#options;
    if (this.#discovered.size <= capacity) return [];
    const evicted: string[] = [];
    // Phase 1 (§6.3): tools whose last use is older than the TTL.
    for (const [name, entry] of this.#discovered) {
      if (now - entry.lastUsedAt > ttlMs) {
        this.#discovered.delete(name);
        evicted.push(name);
      }
    }
    // Phase 2: least recently used until within capacity.
    if (this.#discovered.size > capacity) {
      const byAge = [...this.#discovered.entries()].sort(
        ([, a], [, b]) => a.lastUsedAt - b.lastUsedAt || a.sequence - b.sequence,
      );
      for (const [name] of byAge) {
        if (this.#discovered.size <= capacity) break;
        this.#discovered.delete(name);
        evicted.push(name);
      }
    }
    return evicted;
  }
}
