/**
 * @module selection/engine/formatting
 * Provider formatting and token accounting: the formatted schema of each tool sent (cached per
 * provider and content) and the token count of every visible tool, so a 100,000-tool catalog's
 * total is counted once, not after every catalog change.
 *
 * Counts come from the stored counts (selection/token-counts.ts, issue #28), read with each
 * catalog snapshot, so a warm server never loads the tokenizer; a JSON with no stored count is
 * counted here and written back in the background (best effort: a failed write only logs).
 */
import { canonicalJson } from '../../core/hash.ts';
import type { Logger } from '../../core/logger.ts';
import { countTokens } from '../../core/tokens.ts';
import type { Database } from '../../store/database.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import { upsertTokenCounts, type TokenCountRow } from '../../store/repositories/token-counts.ts';
import { LruTtlCache } from '../lru-cache.ts';
import { formatTool, type SelectionProvider } from '../provider-formats.ts';
import { loadTokenCounts, MCP_DEFINITION, mcpDefinition, TokenCountTable, tokenCountKey } from '../token-counts.ts';
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
  /**
   * Tokens of the MCP definition a gateway session shows for `tool` (`mcpDefinition`): stored at
   * sync, else counted and written back like a provider format (a folder synced before these
   * counts existed, or a description changed since, is counted once, not after every restart).
   */
  definitionTokens(tool: SelectionCandidate): number;
  /** Reads the stored counts again (with each catalog snapshot); a failure keeps the ones held. */
  loadCounts(): Promise<void>;
  /** Resolves once the counts made so far are written back (or their write failed). */
  flush(): Promise<void>;
}

/** Where stored counts are read and written back. */
export interface FormattingStore {
  db: Database;
  logger: Pick<Logger, 'warn'>;
}

const WRITE_BACK_MS = 200;

const DAY_MS = 24 * 3_600_000;

/** Creates the formatting caches (keyed by content hash, so catalog changes need no invalidation). */
export function createFormatting(now: () => number, store?: FormattingStore): Formatting {
  // Formatted schemas for the tools actually sent; token counts (small) for the whole catalog.
  const formatCache = new LruTtlCache<FormattedEntry>({ maxEntries: 20_000, ttlMs: DAY_MS, now });
  const tokenCache = new LruTtlCache<number>({ maxEntries: 1_000_000, ttlMs: DAY_MS, now });
  const formatKey = (tool: SelectionCandidate, provider: SelectionProvider) => `${provider}|${tool.id}|${tool.contentHash}|${tool.qualifiedName}`;
  const stored = new TokenCountTable();
  // Counts made here and not yet written back (kept in memory across a reload until they are).
  let pending: TokenCountRow[] = [];
  const inFlight = new Set<TokenCountRow[]>();
  let writing: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;

  function writeBack(): Promise<void> {
    timer = undefined;
    const rows = pending;
    if (rows.length === 0 || store === undefined) return writing;
    pending = [];
    inFlight.add(rows);
    writing = writing
      .then(() => upsertTokenCounts(store.db, rows))
      .catch((error: unknown) => store.logger.warn({ err: error, counts: rows.length }, 'selection: storing token counts failed; they are counted again after a restart'))
      .finally(() => void inFlight.delete(rows));
    return writing;
  }

  function* unstored(): Iterable<[number, number]> {
    for (const rows of [pending, ...inFlight]) for (const row of rows) yield [row.key, row.tokens];
  }

  /** The tokens of `value` as compact JSON: a stored count, else the tokenizer's (remembered); `counted` when new. */
  function lookUp(value: unknown): { key: number; tokens: number; counted: boolean } {
    const json = canonicalJson(value);
    const key = tokenCountKey(json);
    const known = stored.get(key);
    if (known !== undefined) return { key, tokens: known, counted: false };
    const tokens = countTokens(json);
    stored.set(key, tokens);
    return { key, tokens, counted: true };
  }

  /** The tokens of `schema` as sent: a stored count, or the tokenizer's (then written back). */
  function countSchema(tool: SelectionCandidate, provider: SelectionProvider | typeof MCP_DEFINITION, schema: unknown): number {
    const { key, tokens, counted } = lookUp(schema);
    if (counted && store !== undefined) {
      pending.push({ toolId: tool.id, provider, key, tokens });
      timer ??= setTimeout(() => void writeBack(), WRITE_BACK_MS);
      timer.unref?.();
    }
    return tokens;
  }

  function formatted(tool: SelectionCandidate, provider: SelectionProvider): FormattedEntry {
    const key = formatKey(tool, provider);
    const cached = formatCache.get(key);
    if (cached) return cached;
    const entry = formatTool(tool, provider);
    let tokens = tokenCache.get(key);
    if (tokens === undefined) {
      tokens = countSchema(tool, provider, entry.schema);
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
      tokens = countSchema(tool, provider, formatTool(tool, provider).schema);
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

  function definitionTokens(tool: SelectionCandidate): number {
    return countSchema(tool, MCP_DEFINITION, mcpDefinition(tool));
  }

  async function loadCounts(): Promise<void> {
    if (store === undefined) return;
    try {
      await loadTokenCounts(store.db, stored, unstored());
    } catch (error) {
      store.logger.warn({ err: error }, 'selection: reading the stored token counts failed; counting with the tokenizer');
    }
  }

  async function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    await writeBack();
  }

  return { formatted, catalogTokens, caches: { format: formatCache, tokens: tokenCache }, definitionTokens, loadCounts, flush };
}
