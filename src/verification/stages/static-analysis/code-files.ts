/**
 * @module verification/stages/static-analysis/code-files
 * Which JavaScript / TypeScript files of a plugin are analysed, within bounds (issue #10): the
 * files of each package of the tree (own packages first, so limits drop dependency code
 * before the plugin's own), never descending into a nested node_modules (those are packages
 * of their own, listed by the tree) nor following a link, nor into a dependency's test or
 * example folders (code that never runs in the plugin). Declaration files (.d.ts) carry no
 * behaviour and are skipped. What was left out is counted, so the report can say so.
 */
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { InstalledPackage } from './package-tree.ts';

/** Bounds of one analysis. */
export interface CodeFileLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** Defaults: enough for a typical npm MCP server with its SDK, small enough for a 30 s budget. */
export const DEFAULT_CODE_FILE_LIMITS: CodeFileLimits = { maxFiles: 4_000, maxFileBytes: 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

/** One file to analyse: its path relative to the code folder and whether it is the plugin's own code. */
export interface CodeFile {
  path: string;
  own: boolean;
  packageName: string;
  size: number;
}

/** What the walk left out, by reason. */
export interface SkippedFiles {
  tooLarge: number;
  overLimit: number;
  links: number;
  declarations: number;
}

const CODE_EXTENSION = /\.(m|c)?(j|t)sx?$/;
const DECLARATION = /\.d\.(m|c)?ts$/;
// .quiver-venv: a Python plugin's installed environment (issue #26), dependencies like node_modules.
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.quiver-venv']);
/** A dependency's own tests do not run in the plugin (npm packages often ship them anyway). */
const DEPENDENCY_TEST_DIRS = new Set(['test', 'tests', '__tests__', 'spec', 'benchmark', 'benchmarks', 'example', 'examples']);

async function walk(root: string, dir: string, own: boolean, include: RegExp, visit: (relative: string, size: number) => void, skipped: SkippedFiles, depth: number): Promise<void> {
  if (depth > 40) return;
  const absolute = dir === '' ? root : join(root, dir);
  let entries;
  try {
    entries = await readdir(absolute, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isSymbolicLink()) {
      skipped.links++;
      continue;
    }
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && (own || !DEPENDENCY_TEST_DIRS.has(entry.name))) await walk(root, relative, own, include, visit, skipped, depth + 1);
      continue;
    }
    if (!entry.isFile() || !include.test(entry.name)) continue;
    if (DECLARATION.test(entry.name)) {
      skipped.declarations++;
      continue;
    }
    const info = await lstat(join(root, relative)).catch(() => undefined);
    if (info?.isFile()) visit(relative, info.size);
  }
}

/** The code files of the packages, own packages first, within `limits`; `include` picks file names (default: JS / TS). */
export async function listCodeFiles(
  codeDir: string,
  packages: readonly InstalledPackage[],
  limits: CodeFileLimits = DEFAULT_CODE_FILE_LIMITS,
  include: RegExp = CODE_EXTENSION,
  ownDir = '',
): Promise<{ files: CodeFile[]; skipped: SkippedFiles }> {
  const root = await realpath(codeDir);
  const skipped: SkippedFiles = { tooLarge: 0, overLimit: 0, links: 0, declarations: 0 };
  const files: CodeFile[] = [];
  let total = 0;
  const ordered = [...packages].sort((a, b) => Number(b.own) - Number(a.own));
  // A plugin folder without a package.json is still code: analyse the folder as its own package.
  const roots = ordered.length === 0 ? [{ dir: ownDir, own: true, name: '(folder)' }] : ordered;
  for (const pkg of roots) {
    await walk(
      root,
      pkg.dir,
      pkg.own,
      include,
      (path, size) => {
        if (size > limits.maxFileBytes) skipped.tooLarge++;
        else if (files.length >= limits.maxFiles || total + size > limits.maxTotalBytes) skipped.overLimit++;
        else {
          files.push({ path, own: pkg.own, packageName: pkg.name, size });
          total += size;
        }
      },
      skipped,
      0,
    );
  }
  return { files, skipped };
}

/**
 * Adds files named by a listing rather than a walk (a Python distribution's RECORD,
 * python-tree.ts) to `files`, within the same `limits`; links and missing files are left out.
 */
export async function addListedFiles(
  codeDir: string,
  listed: ReadonlyArray<{ path: string; own: boolean; packageName: string }>,
  files: CodeFile[],
  skipped: SkippedFiles,
  limits: CodeFileLimits = DEFAULT_CODE_FILE_LIMITS,
): Promise<void> {
  const root = await realpath(codeDir);
  let total = files.reduce((sum, file) => sum + file.size, 0);
  const known = new Set(files.map((file) => file.path));
  for (const entry of listed) {
    if (known.has(entry.path)) continue;
    if (DECLARATION.test(entry.path)) {
      skipped.declarations++;
      continue;
    }
    const info = await lstat(join(root, entry.path)).catch(() => undefined);
    if (info?.isSymbolicLink()) skipped.links++;
    if (!info?.isFile()) continue;
    if (info.size > limits.maxFileBytes) skipped.tooLarge++;
    else if (files.length >= limits.maxFiles || total + info.size > limits.maxTotalBytes) skipped.overLimit++;
    else {
      files.push({ path: entry.path, own: entry.own, packageName: entry.packageName, size: info.size });
      known.add(entry.path);
      total += info.size;
    }
  }
}
