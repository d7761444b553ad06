/**
 * @module verification/stages/static-analysis/package-tree
 * The installed production dependency tree of a plugin's code folder (issue #10): which
 * packages are the plugin's own, and every package reachable from them through `dependencies`
 * and `optionalDependencies` (never devDependencies: they are not installed for a plugin),
 * resolved the way Node does (the nearest `node_modules/<name>` walking up the folders). Shared
 * by static analysis (code, install scripts, dependency count) and the security scan
 * (advisories, licences). Every package.json is read through plugins/source-files.ts, so a
 * link out of the plugin's folder is never followed.
 *
 * Own packages: the folder's package.json when it names a package; when it has no name it is
 * an install prefix (npm installs a plugin as a dependency of such a file, plugins/npm.ts), and
 * its direct dependencies are the plugin's own packages.
 */
import { posix } from 'node:path';
import { parseSourceJson, readSourceFile, SourceFileError } from '../../../plugins/source-files.ts';

/** One installed package. `dir` is relative to the code folder ('' for the folder itself). */
export interface InstalledPackage {
  name: string;
  version: string;
  dir: string;
  own: boolean;
  /** The `license` field as written (string, `{type}`, or legacy `licenses` array), undefined when absent. */
  license: unknown;
  scripts: Record<string, string>;
}

/** The tree: packages found, required dependencies not found, and package.json files that could not be read. */
export interface PackageTree {
  packages: InstalledPackage[];
  missing: string[];
  unreadable: string[];
  /** True when the tree was cut at `maxPackages`. */
  truncated: boolean;
}

/** Hard cap on packages read (a real MCP server has a few hundred at most). */
export const MAX_PACKAGES = 3_000;

interface RawManifest {
  name?: unknown;
  version?: unknown;
  license?: unknown;
  licenses?: unknown;
  scripts?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
}

async function readManifest(codeDir: string, dir: string): Promise<RawManifest | 'unreadable' | undefined> {
  const file = dir === '' ? 'package.json' : `${dir}/package.json`;
  try {
    const text = await readSourceFile(codeDir, file, { maxBytes: 1024 * 1024 });
    if (text === undefined) return undefined;
    const parsed = parseSourceJson(text, file);
    if (!('value' in parsed) || parsed.value === null || typeof parsed.value !== 'object') return 'unreadable';
    return parsed.value as RawManifest;
  } catch (error) {
    if (error instanceof SourceFileError) return 'unreadable';
    throw error;
  }
}

function names(field: unknown): string[] {
  return field !== null && typeof field === 'object' ? Object.keys(field as Record<string, unknown>) : [];
}

function stringRecord(field: unknown): Record<string, string> {
  if (field === null || typeof field !== 'object') return {};
  return Object.fromEntries(Object.entries(field as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** Where Node would find `name` required from `fromDir`: the nearest node_modules up the folders. */
async function resolveDependency(codeDir: string, fromDir: string, name: string): Promise<{ dir: string; manifest: RawManifest | 'unreadable' } | undefined> {
  if (!PACKAGE_NAME.test(name) || name.includes('..')) return undefined;
  let dir = fromDir;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    const manifest = await readManifest(codeDir, candidate);
    if (manifest !== undefined) return { dir: candidate, manifest };
    if (dir === '') return undefined;
    const parent = posix.dirname(dir);
    dir = parent === '.' ? '' : parent;
  }
}

/** npm's rules for names and versions, loosely: anything else is not quoted into a report. */
const PACKAGE_NAME = /^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]{0,213}$/i;
const PACKAGE_VERSION = /^[\w.+-]{1,64}$/;

function toPackage(manifest: RawManifest, dir: string, own: boolean, fallbackName: string): InstalledPackage {
  return {
    name: typeof manifest.name === 'string' && PACKAGE_NAME.test(manifest.name) ? manifest.name : fallbackName,
    version: typeof manifest.version === 'string' && PACKAGE_VERSION.test(manifest.version) ? manifest.version : '0.0.0',
    dir,
    own,
    license: manifest.license ?? manifest.licenses,
    scripts: stringRecord(manifest.scripts),
  };
}

/**
 * Where a plugin's code sits: the folder read (`root`, the install root when the plugin is a
 * package inside one) and the plugin's own folder relative to it (`ownDir`, '' when the same).
 * An npm install's code folder is `<install root>/node_modules/<package>` with its
 * dependencies hoisted beside it, so the tree must be read from the install root
 * (`source.cachePath`, or the folder above `node_modules`); nothing above that root is read.
 */
export function codeLayout(codeDir: string, source: Record<string, unknown> = {}): { root: string; ownDir: string } {
  const cachePath = typeof source['cachePath'] === 'string' ? posix.normalize(source['cachePath']).replace(/\/+$/, '') : undefined;
  const normalised = posix.normalize(codeDir).replace(/\/+$/, '');
  if (cachePath !== undefined && normalised.startsWith(`${cachePath}/`)) return { root: cachePath, ownDir: normalised.slice(cachePath.length + 1) };
  const inNodeModules = /^(.+?)\/(node_modules\/(?:@[^/]+\/)?[^/]+)$/.exec(normalised);
  if (inNodeModules !== null) return { root: inNodeModules[1]!, ownDir: inNodeModules[2]! };
  return { root: normalised, ownDir: '' };
}

/** Reads the production dependency tree under `codeDir` (breadth first, own packages first); `ownDir` is the plugin's folder in it. */
export async function readPackageTree(codeDir: string, options: { maxPackages?: number; ownDir?: string } = {}): Promise<PackageTree> {
  const maxPackages = options.maxPackages ?? MAX_PACKAGES;
  const ownDir = options.ownDir ?? '';
  const tree: PackageTree = { packages: [], missing: [], unreadable: [], truncated: false };
  const root = await readManifest(codeDir, ownDir);
  if (root === undefined) return tree;
  if (root === 'unreadable') {
    tree.unreadable.push(ownDir === '' ? 'package.json' : `${ownDir}/package.json`);
    return tree;
  }
  const queue: Array<{ dir: string; manifest: RawManifest }> = [];
  const seen = new Set<string>();
  const visit = (pkg: InstalledPackage, manifest: RawManifest) => {
    seen.add(pkg.dir);
    tree.packages.push(pkg);
    queue.push({ dir: pkg.dir, manifest });
  };
  if (typeof root.name === 'string') visit(toPackage(root, ownDir, true, ownDir === '' ? '(plugin)' : ownDir.replace(/^.*node_modules\//, '')), root);
  else if (ownDir !== '') return tree;
  else {
    // An install prefix: its dependencies are the plugin itself.
    for (const name of names(root.dependencies)) {
      const found = await resolveDependency(codeDir, '', name);
      if (found === undefined) tree.missing.push(PACKAGE_NAME.test(name) ? name : '(an invalid name)');
      else if (found.manifest === 'unreadable') tree.unreadable.push(`${found.dir}/package.json`);
      else if (!seen.has(found.dir)) visit(toPackage(found.manifest, found.dir, true, name), found.manifest);
    }
  }
  while (queue.length > 0) {
    const { dir, manifest } = queue.shift()!;
    const optional = new Set(names(manifest.optionalDependencies));
    for (const name of new Set([...names(manifest.dependencies), ...optional])) {
      const found = await resolveDependency(codeDir, dir, name);
      if (found === undefined) {
        if (!optional.has(name)) tree.missing.push(PACKAGE_NAME.test(name) ? name : '(an invalid name)');
        continue;
      }
      if (seen.has(found.dir)) continue;
      if (found.manifest === 'unreadable') {
        seen.add(found.dir);
        tree.unreadable.push(`${found.dir}/package.json`);
        continue;
      }
      if (tree.packages.length >= maxPackages) {
        tree.truncated = true;
        return tree;
      }
      visit(toPackage(found.manifest, found.dir, false, name), found.manifest);
    }
  }
  return tree;
}
