/**
 * @module cli/bench/sections
 * The benchmark sections `quiver bench` runs, in order. Each returns measured figures.
 */
import { benchServeStartup } from './startup.ts';

/** One named benchmark. */
export interface BenchSection {
  name: string;
  run(): Promise<unknown>;
}

export const benchSections: BenchSection[] = [{ name: 'serveStartup', run: benchServeStartup }];
