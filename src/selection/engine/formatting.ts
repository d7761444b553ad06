/**
 * @module selection/engine/formatting
 * Provider formatting and token accounting: the formatted schema of each tool sent (cached per
 * provider and content) and the token count of every visible tool, so a 100,000-tool catalog's
 * total is counted once, not after every catalog change.
 */
import { countJsonTokens } from '../../core/tokens.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import { LruTtlCache } from '../lru-cache.ts';
import { formatTool, type SelectionProvider } from '../provider-formats.ts';
import { deepFreeze } from './catalog.ts';
import type { FormattedEntry, VisibleSet } from './types.ts';

/** Formatting with its caches. */
export interface Formatting {
  /** A tool as the provider expects it, with its token count (frozen, shared). */
  formatted(tool: SelectionCandidate, provider: SelectionProvider): FormattedEntry;
  /** The tokens the whole visible set would cost in this provider's format (memoised on the set). */
  catalogTokens(visible: VisibleSet, provider: SelectionProvider): number;
  /** The caches, for `cacheStats`. */
  readonly caches: { format: LruTtlCache<unknown>; tokens: LruTtlCache<unknown> };
}

const DAY_MS = 24 * 3_600_000;

/** Creates the formatting caches (keyed by content hash, so catalog changes need no invalidation). */
export function createFormatting(now: () => number): Formatting {
  // Formatted schemas for the tools actually sent; token counts (small) for the whole catalog.
  const formatCache = new LruTtlCache<FormattedEntry>({ maxEntries: 20_000, ttlMs: DAY_MS, now });
  const tokenCache = new LruTtlCache<number>({ maxEntries: 1_000_000, ttlMs: DAY_MS, now });
  const formatKey = (tool: SelectionCandidate, provider: SelectionProvider) => `${provider}|${tool.id}|${tool.contentHash}|${tool.qualifiedName}`;

  function formatted(tool: SelectionCandidate, provider: SelectionProvider): FormattedEntry {
    const key = formatKey(tool, provider);
    const cached = formatCache.get(key);
    if (cached) return cached;
    const entry = formatTool(tool, provider);
    let tokens = tokenCache.get(key);
    if (tokens === undefined) {
      tokens = countJsonTokens(entry.schema);
      tokenCache.set(key, tokens);
    }
    const value: FormattedEntry = { name: entry.name, schema: deepFreeze(entry.schema), tokens };
    formatCache.set(key, value);
    return value;
  }

  function toolTokens(tool: SelectionCandidate, provider: SelectionProvider): number {
    const key = formatKey(tool, provider);
    let tokens = tokenCache.get(key);
    if (tokens === undefined) {
      tokens = countJsonTokens(formatTool(tool, provider).schema);
      tokenCache.set(key, tokens);
    }
    return tokens;
  }

  function catalogTokens(visible: VisibleSet, provider: SelectionProvider): number {
    let total = visible.catalogTokens.get(provider);
    if (total === undefined) {
      total = 0;
      for (const tool of visible.tools) total += toolTokens(tool, provider);
      visible.catalogTokens.set(provider, total);
    }
    return total;
  }

  return { formatted, catalogTokens, caches: { format: formatCache, tokens: tokenCache } };
}
