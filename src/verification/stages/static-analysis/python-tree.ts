/**
 * @module verification/stages/static-analysis/python-tree
 * The installed Python distributions of a plugin's venv (issue #26), the Python counterpart of
 * package-tree.ts. A Python plugin's code sits in `.quiver-venv` beside its folder (a `pypi:`
 * plugin's folder holds nothing else), which the folder walk skips like node_modules; so the
 * venv is read here, as files only (nothing is imported or run):
 * - the plugin's own distribution (the one its source records as `packageName`, else the one
 *   pip installed from a local folder) is the plugin's own code: the files its `RECORD` lists
 *   inside site-packages (its top-level modules' folders when there is no RECORD);
 * - the distributions reachable from it through `Requires-Dist` (extras left out: pip did not
 *   install them) are its dependency tree, at dependency weight as for npm; pip, setuptools and
 *   wheel, which the venv brings along, are not unless something requires them.
 * A distribution installed from the plugin's own folder (`pip install .` of a git checkout or a
 * local folder) is not read again: the folder walk already analyses those files as own code.
 * Every file is read through plugins/source-files.ts, so a link out of the folder is never followed.
 */
import { lstat, readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { normalizeDistributionName, sitePackages, VENV_FOLDER } from '../../../plugins/python/install.ts';
import { readSourceFile, SourceFileError } from '../../../plugins/source-files.ts';
import type { InstalledPackage } from './package-tree.ts';

/** One distribution of the venv and the files it installed (relative to the analysed root). */
export interface PythonDistribution extends InstalledPackage {
  files: string[];
}

/** The venv's tree: own distribution (if any) first, then the dependencies reachable from it. */
export interface PythonTree {
  packages: PythonDistribution[];
  /** Required (no marker) but not installed. */
  missing: string[];
}

/** What pip brings into every venv: a dependency only when something requires it. */
const VENV_TOOLS = new Set(['pip', 'setuptools', 'wheel']);

interface RawDistribution {
  name: string;
  version: string;
  license: string | undefined;
  distInfo: string;
  requires: Array<{ name: string; conditional: boolean }>;
  requested: boolean;
  local: boolean;
  topLevel: string[];
}

async function readText(root: string, path: string): Promise<string | undefined> {
  try {
    return await readSourceFile(root, path, { maxBytes: 4 * 1024 * 1024 });
  } catch (error) {
    if (error instanceof SourceFileError) return undefined;
    throw error;
  }
}

/** `Requires-Dist: name (>=1) ; python_version < "3.11"` → the name and whether it has a marker; extras are dropped. */
export function parseRequiresDist(metadata: string): Array<{ name: string; conditional: boolean }> {
  const requires: Array<{ name: string; conditional: boolean }> = [];
  for (const match of metadata.matchAll(/^Requires-Dist:\s*(.+)$/gm)) {
    const [requirement, marker] = match[1]!.split(';', 2) as [string, string | undefined];
    if (marker !== undefined && /\bextra\s*==/.test(marker)) continue;
    const name = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(requirement)?.[1];
    if (name !== undefined) requires.push({ name: normalizeDistributionName(name), conditional: marker !== undefined && marker.trim() !== '' });
  }
  return requires;
}

/** The site-packages files a RECORD lists: paths inside site-packages only (scripts in ../../../bin are pip's wrappers). */
export function recordFiles(record: string): string[] {
  const files: string[] = [];
  for (const line of record.split('\n')) {
    // RECORD is CSV; a path with a comma is quoted.
    const path = line.startsWith('"') ? /^"((?:[^"]|"")*)"/.exec(line)?.[1]?.replace(/""/g, '"') : line.split(',', 1)[0];
    if (path === undefined || path === '' || path.startsWith('/')) continue;
    const normalised = posix.normalize(path);
    if (normalised.startsWith('../') || normalised === '..') continue;
    files.push(normalised);
  }
  return files;
}

async function readDistributions(root: string, site: string): Promise<RawDistribution[]> {
  const found: RawDistribution[] = [];
  const entries = await readdir(posix.join(root, site)).catch(() => [] as string[]);
  for (const entry of entries.sort()) {
    if (!entry.endsWith('.dist-info')) continue;
    const distInfo = posix.join(site, entry);
    const metadata = (await readText(root, posix.join(distInfo, 'METADATA'))) ?? '';
    const name = /^Name:\s*(.+)$/m.exec(metadata)?.[1]?.trim();
    const version = /^Version:\s*(.+)$/m.exec(metadata)?.[1]?.trim();
    if (name === undefined || version === undefined) continue;
    const directUrl = await readText(root, posix.join(distInfo, 'direct_url.json'));
    const topLevel = ((await readText(root, posix.join(distInfo, 'top_level.txt'))) ?? '').split('\n').map((line) => line.trim()).filter((line) => /^[A-Za-z_]\w*$/.test(line));
    found.push({
      name,
      version,
      license: /^License-Expression:\s*(.+)$/m.exec(metadata)?.[1]?.trim() ?? /^License:\s*(.+)$/m.exec(metadata)?.[1]?.trim(),
      distInfo,
      requires: parseRequiresDist(metadata),
      requested: (await readText(root, posix.join(distInfo, 'REQUESTED'))) !== undefined,
      local: directUrl !== undefined && /"url"\s*:\s*"file:/.test(directUrl) && !/"archive_info"/.test(directUrl),
      topLevel,
    });
  }
  return found;
}

/** A distribution's files relative to `root`: its RECORD, else its top-level modules' files. */
async function distributionFiles(root: string, site: string, dist: RawDistribution, include: RegExp): Promise<string[]> {
  const record = await readText(root, posix.join(dist.distInfo, 'RECORD'));
  const listed = record !== undefined ? recordFiles(record) : await moduleFiles(root, site, dist.topLevel);
  return listed.filter((file) => include.test(file) && !file.includes('.dist-info/') && !file.includes('__pycache__/')).map((file) => posix.join(site, file));
}

async function moduleFiles(root: string, site: string, modules: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const walk = async (relative: string, depth: number): Promise<void> => {
    if (depth > 20) return;
    const entries = await readdir(posix.join(root, site, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = posix.join(relative, entry.name);
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (entry.isFile()) files.push(path);
    }
  };
  for (const module of modules) {
    const single = await lstat(posix.join(root, site, `${module}.py`)).catch(() => undefined);
    if (single?.isFile()) files.push(`${module}.py`);
    else await walk(module, 0);
  }
  return files;
}

/**
 * Reads the venv of the plugin folder `ownDir` under `root`, or undefined when it has none.
 * `ownName` is the plugin's distribution as its source records it (`packageName`).
 */
export async function readPythonTree(root: string, ownDir: string, include: RegExp, ownName?: string): Promise<PythonTree | undefined> {
  const venv = posix.join(ownDir === '' ? '.' : ownDir, VENV_FOLDER);
  if ((await readText(root, posix.join(venv, 'pyvenv.cfg'))) === undefined) return undefined;
  const absoluteSite = await sitePackages(posix.join(root, venv));
  if (absoluteSite === undefined) return { packages: [], missing: [] };
  const site = posix.relative(root, absoluteSite);
  const installed = await readDistributions(root, site);
  const byName = new Map(installed.map((dist) => [normalizeDistributionName(dist.name), dist]));
  const own =
    (ownName !== undefined ? byName.get(normalizeDistributionName(ownName)) : undefined) ??
    installed.find((dist) => dist.local && dist.requested);
  // Without a distribution of its own (a requirements.txt project) what was asked for is the tree's top.
  const roots = own !== undefined ? own.requires : installed.filter((dist) => dist.requested && !VENV_TOOLS.has(normalizeDistributionName(dist.name))).map((dist) => ({ name: normalizeDistributionName(dist.name), conditional: false }));
  const tree: PythonTree = { packages: [], missing: [] };
  const seen = new Set<string>();
  const visit = async (dist: RawDistribution, isOwn: boolean) => {
    seen.add(normalizeDistributionName(dist.name));
    // The folder walk already reads a distribution installed from the plugin's own folder.
    const files = isOwn && dist.local ? [] : await distributionFiles(root, site, dist, include);
    tree.packages.push({ name: dist.name, version: dist.version, dir: dist.distInfo, own: isOwn, license: dist.license, scripts: {}, files });
  };
  if (own !== undefined) await visit(own, true);
  const queue = [...roots];
  while (queue.length > 0) {
    const requirement = queue.shift()!;
    if (seen.has(requirement.name)) continue;
    const dist = byName.get(requirement.name);
    if (dist === undefined) {
      if (!requirement.conditional && !tree.missing.includes(requirement.name)) tree.missing.push(requirement.name);
      continue;
    }
    await visit(dist, false);
    queue.push(...dist.requires);
  }
  return tree;
}
