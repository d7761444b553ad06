/**
 * @module retrieval/eval/options
 * The `quiver eval` options, apart from the evaluation itself so the CLI's command list reads
 * them without loading the retrieval index (issue #28).
 */

/** The `quiver eval` options, in node:util parseArgs form (shared with the CLI framework). */
export const evalOptions = {
  tools: { type: 'string' },
  queries: { type: 'string' },
  examples: { type: 'string' },
  k: { type: 'string' },
  embedder: { type: 'string' },
} as const;

/** The accepted values of `--embedder` (here, not beside the embedders, for the same reason). */
export const embedderFlagHelp =
  'table (token table distilled from the shipped model), model (the shipped USE-Lite itself), offline (hashed features), none (lexical only), openai:URL (model name from QUIVER_EMBEDDER_MODEL)';
