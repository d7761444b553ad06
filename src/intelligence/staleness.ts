/**
 * @module intelligence/staleness
 * Whether a stored generation still matches its sources (issue #14): the cheap input hashes
 * (author, discovery, code files) are recomputed and compared with the stored ones; OpenAPI
 * and LLM hashes are carried over (the LLM's follow the other sources' by construction). A
 * changed hash names its source as stale.
 */
import { generationHash, staleSources } from './content-hash.ts';
import type { GenerationRecord } from './repository.ts';
import { authorSource } from './sources/author.ts';
import { readCodeSnapshot } from './sources/code-files.ts';
import { mcpSource } from './sources/mcp.ts';
import type { GenerationInputs } from './types.ts';

/** Whether the stored document still matches its sources. */
export interface StalenessReport {
  plugin: string;
  generated: boolean;
  stale: boolean;
  staleSources: string[];
  contentHash: string | null;
  currentHash: string;
}

/** Recomputes the input hashes of the sources `stored` used and compares them. */
export async function staleness(name: string, inputs: GenerationInputs, stored: GenerationRecord | undefined): Promise<StalenessReport> {
  const used = stored?.inputHashes ?? {};
  const current: Record<string, string> = {};
  const author = inputs.author === undefined ? undefined : authorSource(name, inputs.author);
  if (author !== undefined) current['author'] = author.inputHash;
  if (used['mcp'] !== undefined && inputs.discovered !== undefined) current['mcp'] = mcpSource(inputs.discovered).inputHash;
  if ((used['zod'] !== undefined || used['ts'] !== undefined) && inputs.codeDir !== null) {
    const { inputHash } = await readCodeSnapshot(inputs.codeDir);
    if (used['zod'] !== undefined) current['zod'] = inputHash;
    if (used['ts'] !== undefined) current['ts'] = inputHash;
  }
  for (const carried of ['openapi', 'llm']) if (used[carried] !== undefined) current[carried] = used[carried]!;
  const changed = stored === undefined ? [] : staleSources(used, current);
  return {
    plugin: name,
    generated: stored !== undefined,
    stale: stored === undefined || changed.length > 0,
    staleSources: changed,
    contentHash: stored?.contentHash ?? null,
    currentHash: generationHash(current),
  };
}
