/**
 * @module cli/bench/bench-data
 * Where the public benchmark data lives: `bench/data/<set>/` at the repository root (see its
 * README for sources and licences). The same relative path holds from `src/cli/bench/` and from
 * the compiled `dist/cli/bench/`. The folder is not in the npm package, so from an installed
 * package this fails with a message naming the folder instead of a bare ENOENT.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';

/** The data sets kept in `bench/data/`. */
export type BenchDataSet = 'seal-tools' | 'metatool';

const BENCH_DATA_ROOT = new URL('../../../bench/data/', import.meta.url);

/** The URL of a file of a bench data set; throws `not_found` naming the folder when it is absent. */
export function benchDataFile(set: BenchDataSet, file: string, root: URL = BENCH_DATA_ROOT): URL {
  const url = new URL(`${set}/${file}`, root);
  if (!existsSync(url)) {
    throw new QuiverError(
      ErrorCodes.notFound,
      `benchmark data ${fileURLToPath(url)} is missing: it ships with the source repository (bench/data/${set}/), not with the npm package; run this from a clone`,
    );
  }
  return url;
}
