/**
 * @module cli/bench/memory
 * Resident memory of a Quiver process with 10,000 tools loaded (DESIGN §6). A first child
 * creates an embedded store and syncs the tools; a second, fresh child opens it as a
 * restarted server would, warms selection over every tool (index built, caches filled) and
 * reports its RSS — measured in children so the figure is not the bench's own.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonText } from '../../core/validation.ts';

/**
 * The build this bench runs from: `bin/entry.mjs` already chose it when `quiver` started
 * (compiled when fresh), so this module is `memory.js` under dist/ or `memory.ts` under tsx.
 */
const build: 'dist' | 'src' = import.meta.url.endsWith('.js') ? 'dist' : 'src';

/** The child as `quiver` itself runs: the same build as this process. */
function childCommand(): string[] {
  return build === 'dist'
    ? [fileURLToPath(new URL('./memory-child.js', import.meta.url))]
    : ['--import', 'tsx', fileURLToPath(new URL('./memory-child.ts', import.meta.url))];
}

/** What the children measured. */
export interface MemoryBench {
  tools: number;
  /** `dist` (compiled, as installed) or `src` (TypeScript compiled on the fly by tsx). */
  build: 'dist' | 'src';
  rssAfterSyncMb: number;
  rssAfterOpenMb: number;
  rssLoadedMb: number;
  heapUsedMb: number;
  externalMb: number;
  target: string;
}

async function runChild(args: string[]): Promise<Record<string, number>> {
  const child = spawn(process.execPath, [...childCommand(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`memory bench child exited with ${code}: ${err.slice(-500)}`);
  return parseJsonText(out.trim().split('\n').pop() ?? '', 'memory bench output') as Record<string, number>;
}

/** Seeds a store with `tools` tools, then measures a fresh process serving them. */
export async function benchMemory(tools = 10_000): Promise<MemoryBench> {
  const folder = mkdtempSync(join(tmpdir(), 'quiver-bench-memory-'));
  try {
    const seeded = await runChild(['seed', folder, String(tools)]);
    const loaded = await runChild(['load', folder]);
    return {
      tools: loaded['tools']!,
      build,
      rssAfterSyncMb: seeded['rssAfterSyncMb']!,
      rssAfterOpenMb: loaded['rssAfterOpenMb']!,
      rssLoadedMb: loaded['rssLoadedMb']!,
      heapUsedMb: loaded['heapUsedMb']!,
      externalMb: loaded['externalMb']!,
      target: 'RSS ≤ 400 MB with 10,000 tools loaded',
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
