/**
 * @module intelligence/content-hash
 * The deterministic content hash of a generation (seed 000 §3.3): SHA-256 over the canonical
 * JSON of each source's input hash (what it read, normalized: sorted discovered tools, the
 * code files' paths and content hashes, the bundled OpenAPI document, the LLM request keys)
 * and the generator's version. Equal inputs give an equal hash on every machine; a changed
 * source file changes its source's hash and so the document's, which marks it stale.
 */
import { contentHash } from '../core/hash.ts';

/** Bumped when the generator's output for the same inputs changes (a new field, a new rule). */
export const GENERATOR_VERSION = 'pid-gen-1';

/** The hash of a generation from its sources' input hashes. */
export function generationHash(inputHashes: Readonly<Record<string, string>>): string {
  return contentHash({ generator: GENERATOR_VERSION, inputs: inputHashes });
}

/** Which sources' inputs changed between two hash sets (added, removed or different). */
export function staleSources(previous: Readonly<Record<string, string>>, current: Readonly<Record<string, string>>): string[] {
  const names = new Set([...Object.keys(previous), ...Object.keys(current)]);
  return [...names].filter((name) => previous[name] !== current[name]).sort();
}
