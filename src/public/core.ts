/**
 * @module quiver/core
 * The part of Quiver's public API that needs no database and no running app: the error
 * type, qualified tool names, the provider formats and the retrieval metrics. It loads in a
 * fraction of the time and memory of the main entry (which pulls in the store, PGlite and the
 * MCP runtime; figures in docs/library.md), so a service that only formats tools or scores
 * rankings imports this.
 * Everything here is also exported by `quiver`. Documented in docs/library.md.
 *
 * @example
 * import { formatTools } from 'quiver/core';
 * const { schemas, names } = formatTools(
 *   [{ qualifiedName: 'crm__create_contact', description: 'Create a contact', parameters: { type: 'object' } }],
 *   'gemini',
 * );
 */

// Errors: one type with a stable string code (docs/library.md "Errors").
export { QuiverError, ErrorCodes, isQuiverError, toQuiverError } from '../core/errors.ts';
export type { ErrorCode, ErrorKind, QuiverErrorOptions } from '../core/errors.ts';

// Qualified names: `plugin__tool`, the name every tool has across plugins.
export { NAME_SEPARATOR, formatQualifiedName, parseQualifiedName, isValidPluginName, isValidToolName } from '../core/names.ts';
export type { QualifiedName } from '../core/names.ts';

// Tool definitions as plugins and admins write them (the items of a sync payload's `tools`).
export { toolInputSchema } from '../core/tool.ts';
export type { ToolInput, ToolInputDraft } from '../core/tool.ts';

// Provider formats: a tool list in the shape OpenAI, Anthropic, Gemini or MCP take as `tools`.
export { PROVIDERS, formatTool, formatTools, providerToolName, toGeminiSchema } from '../selection/provider-formats.ts';
export type { SelectionProvider, FormattableTool, FormattedTool, GeminiSchemaResult } from '../selection/provider-formats.ts';

// Retrieval metrics of `quiver eval` (recall@k, comp@k, nDCG@10, MRR) for your own rankings.
export { queryMetrics, averageMetrics } from '../retrieval/eval/metrics.ts';
export type { QueryMetrics, MetricTotals, RelevantItems } from '../retrieval/eval/metrics.ts';
