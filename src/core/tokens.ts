/**
 * @module core/tokens
 * Token counts with a real BPE tokenizer (o200k_base, the encoding of current OpenAI
 * models), not characters / 4. Anthropic and Gemini tokenizers are not public; o200k is
 * the closest public proxy and is what the savings figures are measured with.
 */
import { canonicalJson } from './hash.ts';
import { lazyRequire } from './lazy-require.ts';

// The encoder's tables load on the first count, not at import (issue #28): most processes
// (`quiver --help`, a forwarded command) never count a token.
const tokenizer = lazyRequire<typeof import('gpt-tokenizer/encoding/o200k_base')>('gpt-tokenizer/encoding/o200k_base');

/** The tokenizer used for every count Quiver reports. */
export const TOKENIZER_NAME = 'o200k_base';

/** Number of tokens in `text`. */
export function countTokens(text: string): number {
  return tokenizer.encode(text).length;
}

/** Tokens a JSON value costs when sent as compact JSON (as tool schemas are). */
export function countJsonTokens(value: unknown): number {
  return countTokens(canonicalJson(value));
}
