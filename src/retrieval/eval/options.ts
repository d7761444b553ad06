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
