/**
 * @module intelligence/types
 * The shapes of the generation pipeline (seed 000 §3.3, issue #14): each source returns a
 * partial Plugin Intelligence Document (the same shape as the PID, tools keyed by name) and
 * the hash of the inputs it read; the merge turns the partials into one document plus a
 * provenance map saying which source each field came from.
 */
import type { ToolRecord } from '../core/tool.ts';

/** The generation sources, highest precedence first (docs/metadata.md "Generating documents"). */
export const SOURCE_PRECEDENCE = ['author', 'mcp', 'zod', 'ts', 'openapi', 'llm'] as const;
/** A source of generated fields; `author` is the document or manifest the plugin ships or an admin wrote. */
export type SourceName = (typeof SOURCE_PRECEDENCE)[number];
/** The sources a caller may ask for with `--from` (the author's document always takes part). */
export const SELECTABLE_SOURCES = ['mcp', 'zod', 'ts', 'openapi', 'llm'] as const;
export type SelectableSource = (typeof SELECTABLE_SOURCES)[number];
/** Sources used when `--from` is not given: everything that costs nothing (LLM enrichment is asked for explicitly). */
export const DEFAULT_SOURCES: readonly SelectableSource[] = ['mcp', 'zod', 'ts', 'openapi'];

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** A partial PID: plugin-level sections plus tool definitions by tool name. */
export interface PartialPid {
  semantic?: JsonObject;
  execution?: JsonObject;
  safety?: JsonObject;
  interoperability?: JsonObject;
  tools: Record<string, JsonObject>;
}

/** What one source produced. */
export interface SourceResult {
  source: SourceName;
  /** SHA-256 of the normalized inputs this source read (its part of the content hash). */
  inputHash: string;
  partial: PartialPid;
  warnings: string[];
}

/** The inputs a generation can draw on. */
export interface GenerationInputs {
  pluginName: string;
  /** The plugin's code folder, when it has one (a path, a git or npm install). */
  codeDir: string | null;
  /** What MCP discovery reported (the plugin's catalog tools), when the plugin is installed. */
  discovered: readonly ToolRecord[] | undefined;
  /** The document the author shipped or an admin wrote, and the plugin's manifest. */
  author: { pid?: JsonObject | undefined; manifest?: JsonObject | undefined } | undefined;
  description?: string | undefined;
}

/** `field path → source`, e.g. `tools.search.inputSchema.properties.query.minLength → zod`. */
export type Provenance = Record<string, SourceName>;

/** LLM use of one generation: calls made, cache hits, tokens and cost. */
export interface LlmUsage {
  calls: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  /** USD from the configured prices; null when no price is configured (tokens only). */
  costUsd: number | null;
}
