/**
 * @module selection/token-counts
 * Token counts that need no tokenizer at run time (issue #28: the o200k tokenizer is ~20 MB of
 * a 10,000-tool server's heap, loaded only to count the catalog). A count is stored per tool and
 * provider format when the tool is synced (`storeToolTokenCounts`, the catalog's sync hook) and
 * looked up by a 53-bit hash of the tokenizer's name and the exact compact JSON that is counted
 * (`tokenCountKey`), so it holds whatever the description source was: an override, an
 * enrichment or a renamed plugin gives another JSON, hence another key, a miss, a count with
 * the tokenizer and a write-back. In memory the engine keeps the keys and counts as two sorted
 * typed arrays (12 bytes a count: 40,000 counts are ~0.5 MB), plus a small map of counts made
 * since the last load.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/hash.ts';
import { countTokens, TOKENIZER_NAME } from '../core/tokens.ts';
import type { Queryable } from '../store/database.ts';
import { findCandidatesByIds, type SelectionCandidate } from '../store/repositories/candidates.ts';
import { listTokenCounts, upsertTokenCounts, type TokenCountRow } from '../store/repositories/token-counts.ts';
import { formatTool, PROVIDERS, type SelectionProvider } from './provider-formats.ts';

const TWO_POW_32 = 2 ** 32;

/** The lookup key of a count: 53 bits of SHA-256(tokenizer name, newline, the JSON counted). */
export function tokenCountKey(json: string): number {
  const digest = createHash('sha256').update(`${TOKENIZER_NAME}\n`, 'utf8').update(json, 'utf8').digest();
  return (digest.readUInt32BE(0) & 0x1f_ffff) * TWO_POW_32 + digest.readUInt32BE(4);
}

/** The compact JSON of a tool in a provider's format: what is counted and sent. */
export function formattedJson(tool: SelectionCandidate, provider: SelectionProvider): string {
  return canonicalJson(formatTool(tool, provider).schema);
}

/**
 * The MCP tool definition a gateway session shows and counts for a tool: its qualified name,
 * description and input schema as the plugin gave it (`$schema` and all; the `mcp` provider
 * format drops `$schema`, so for the many SDK-built plugins whose schemas carry one the two
 * texts differ and both are stored).
 */
export function mcpDefinition(tool: Pick<SelectionCandidate, 'qualifiedName' | 'description' | 'parameters'>): { name: string; description: string; inputSchema: { type: 'object' } & Record<string, unknown> } {
  return { name: tool.qualifiedName, description: tool.description, inputSchema: { type: 'object' as const, ...tool.parameters } };
}

/** The `provider` of a stored count of `mcpDefinition`'s text (beside the provider formats). */
export const MCP_DEFINITION = 'mcp-definition';

/** Counts keyed by `tokenCountKey`: the loaded ones sorted in typed arrays, later ones in a map. */
export class TokenCountTable {
  private keys = new Float64Array(0);
  private counts = new Int32Array(0);
  private added = new Map<number, number>();

  /** The stored count of this key, if known. */
  get(key: number): number | undefined {
    const { keys } = this;
    let low = 0;
    let high = keys.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = keys[mid]!;
      if (at === key) return this.counts[mid];
      if (at < key) low = mid + 1;
      else high = mid - 1;
    }
    return this.added.get(key);
  }

  /** Remembers a count made here (until the next `replace`). */
  set(key: number, tokens: number): void {
    this.added.set(key, tokens);
  }

  /** Replaces the loaded counts (`keep`: counts made here not yet stored, kept beside them). */
  replace(keys: readonly number[], tokens: readonly number[], keep: Iterable<[number, number]> = []): void {
    const order = Array.from(keys.keys()).sort((a, b) => keys[a]! - keys[b]!);
    const sortedKeys = new Float64Array(order.length);
    const sortedCounts = new Int32Array(order.length);
    order.forEach((from, to) => {
      sortedKeys[to] = keys[from]!;
      sortedCounts[to] = tokens[from]!;
    });
    this.keys = sortedKeys;
    this.counts = sortedCounts;
    this.added = new Map(keep);
  }

  /** How many counts are held. */
  get size(): number {
    return this.keys.length + this.added.size;
  }
}

/** The counts of these tools in every provider format and as a gateway's MCP definition, counted with the tokenizer. */
export function countToolFormats(tools: readonly SelectionCandidate[]): TokenCountRow[] {
  const rows: TokenCountRow[] = [];
  const add = (tool: SelectionCandidate, provider: string, json: string) => rows.push({ toolId: tool.id, provider, key: tokenCountKey(json), tokens: countTokens(json) });
  for (const tool of tools) {
    for (const provider of PROVIDERS) add(tool, provider, formattedJson(tool, provider));
    add(tool, MCP_DEFINITION, canonicalJson(mcpDefinition(tool)));
  }
  return rows;
}

const SYNC_BATCH = 500;
/**
 * Tools counted between two turns of the event loop. Counting is synchronous BPE work (~0.1–0.4
 * ms a tool for its five texts on a 2-core machine); a sync of a large plugin inside a running
 * server would otherwise hold searches for a whole batch (a 500-tool batch: 95–175 ms stalls).
 */
const COUNT_CHUNK = 25;

/**
 * Counts and stores the provider formats of these tools as the selection will see them (read
 * back from the catalog, so the JSON is the one a selection formats), in batches. The catalog
 * calls it after a sync committed; its failure only means later selections count and write back.
 */
export async function storeToolTokenCounts(db: Queryable, toolIds: readonly string[]): Promise<number> {
  let stored = 0;
  for (let start = 0; start < toolIds.length; start += SYNC_BATCH) {
    const tools = await findCandidatesByIds(db, toolIds.slice(start, start + SYNC_BATCH));
    const rows: TokenCountRow[] = [];
    for (let chunk = 0; chunk < tools.length; chunk += COUNT_CHUNK) {
      if (chunk > 0) await new Promise((resolve) => setImmediate(resolve));
      rows.push(...countToolFormats(tools.slice(chunk, chunk + COUNT_CHUNK)));
    }
    await upsertTokenCounts(db, rows);
    stored += rows.length;
  }
  return stored;
}

/** Loads every stored count (the engine's table, read with each catalog snapshot). */
export async function loadTokenCounts(db: Queryable, table: TokenCountTable, keep: Iterable<[number, number]> = []): Promise<void> {
  const { keys, tokens } = await listTokenCounts(db);
  table.replace(keys, tokens, keep);
}
