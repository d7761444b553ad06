/**
 * @module verification/stages/static-analysis
 * Stage 2 of seed 000 §4.2, static analysis (issue #10): every JavaScript / TypeScript file of
 * the plugin's code folder and of its production dependency tree is parsed with the
 * TypeScript compiler (analyse-file.ts) and judged: process spawning with run-time arguments,
 * eval / new Function / vm, dynamic require and import, network use outside declared needs,
 * filesystem writes, obfuscation (minified lines, high-entropy and encoded blobs, escaped
 * identifiers, _0x names), install scripts and the dependency count.
 *
 * Scoring: start at 100 and deduct per issue by severity (findings.ts: info 0, low 2, medium
 * 6, high 15, critical 40). The plugin's own code counts in full; dependency issues count half
 * and at most 25 together, and most dependency findings are informational (see FINDING_RULES).
 * An install script (preinstall / install / postinstall) is high in the plugin's own package
 * and medium in a dependency, at full weight (npm would run it on install). More than 150
 * production dependencies is low, more than 400 medium. A plugin without a code folder (a
 * remote plugin) scores 50: nothing could be checked, so the stage vouches for nothing.
 *
 * Declared network need: the intelligence document's `safety.requiredPermissions` naming
 * network / internet / egress / http(s), or a manifest `network` / `egress` field. The Quiver
 * manifest has no such field today, so for most plugins any network use in their own code is
 * a medium issue ("outside declared needs"), never fatal.
 *
 * Where: an npm plugin's code folder is a package inside its install root, with the
 * dependencies hoisted beside it; the tree and files are read from that root (codeLayout), and
 * locations are relative to it (`node_modules/<package>/dist/index.js:12`).
 *
 * A Python plugin (issue #26): its venv's own distribution is its own code and the
 * distributions that one requires are its dependency tree (python-tree.ts), as for npm.
 *
 * Bounds: at most 4,000 files, 1 MiB each, 64 MiB in total, own code first; links are not
 * followed and .d.ts files are skipped; what was left out is an info issue and in metrics.
 */
import { readSourceFile, SourceFileError } from '../../../plugins/source-files.ts';
import type { Stage, StageContext, StageIssue, StageResult, VerificationSubject } from '../../types.ts';
import { analyseSource } from './analyse-file.ts';
import { addListedFiles, DEFAULT_CODE_FILE_LIMITS, listCodeFiles, type CodeFile, type CodeFileLimits } from './code-files.ts';
import { aggregateFindings, scoreIssues, type LocatedFinding } from './findings.ts';
import { codeLayout, readPackageTree, type PackageTree } from './package-tree.ts';
import { readPythonTree } from './python-tree.ts';

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const;
/** JavaScript / TypeScript (parsed) and Python (tokenized, python-scan.ts). */
const ANALYSED_FILES = /\.((m|c)?(j|t)sx?|py)$/;

/**
 * The highest level the verdict may give (issue #23): the plugin's own code naming a
 * home-directory secret keeps it in the strictest sandbox (UNVERIFIED: no network, so nothing
 * read can leave); its own code running code or commands computed at run time keeps it
 * sandboxed with an egress allow-list (COMMUNITY) whatever its score. Dependencies do not cap:
 * they legitimately compile code (ajv) and read credentials (cloud SDKs), and weigh in the score.
 */
export function capOf(findings: readonly LocatedFinding[]): StageResult['cap'] {
  const own = findings.filter((finding) => finding.own);
  const secrets = own.filter((finding) => finding.code === 'secret-path');
  if (secrets.length > 0) return { level: 'UNVERIFIED', reason: `the plugin's own code names home-directory secrets (${secrets[0]!.file}:${secrets[0]!.line})` };
  const execution = own.filter((finding) => finding.fromData === true);
  if (execution.length > 0) {
    const first = execution[0]!;
    return { level: 'COMMUNITY', reason: `the plugin's own code runs code or commands computed at run time (${first.detail ?? first.code}, ${first.file}:${first.line})` };
  }
  return undefined;
}

/** Whether the plugin declares that it needs the network (see the module comment). */
export function declaresNetwork(subject: VerificationSubject): boolean {
  const manifest = subject.manifest ?? {};
  if (manifest['network'] === true || (Array.isArray(manifest['egress']) && manifest['egress'].length > 0)) return true;
  const safety = subject.intelligence?.['safety'];
  const permissions = safety !== null && typeof safety === 'object' ? (safety as Record<string, unknown>)['requiredPermissions'] : undefined;
  if (!Array.isArray(permissions)) return false;
  return permissions.some((permission) => {
    const name = typeof permission === 'string' ? permission : permission !== null && typeof permission === 'object' ? (permission as { name?: unknown }).name : undefined;
    return typeof name === 'string' && /\b(network|internet|egress|https?|outbound)\b/i.test(name);
  });
}

function installScriptIssues(tree: PackageTree): Array<StageIssue & { own: boolean }> {
  const issues: Array<StageIssue & { own: boolean }> = [];
  for (const pkg of tree.packages) {
    const hooks = INSTALL_SCRIPTS.filter((hook) => typeof pkg.scripts[hook] === 'string');
    if (hooks.length === 0) continue;
    issues.push({
      severity: pkg.own ? 'high' : 'medium',
      code: 'install-script',
      message: `${pkg.own ? 'the plugin' : `dependency ${pkg.name}`} has install scripts (${hooks.join(', ')}) that npm would run on install`,
      location: `${pkg.name}@${pkg.version}`,
      // Full weight: the script runs with the installer's rights, dependency or not.
      own: true,
    });
  }
  return issues;
}

function treeIssues(tree: PackageTree, dependencies: number): Array<StageIssue & { own: boolean }> {
  const issues: Array<StageIssue & { own: boolean }> = [];
  if (dependencies > 150) issues.push({ severity: dependencies > 400 ? 'medium' : 'low', code: 'many-dependencies', message: `${dependencies} production dependencies`, own: true });
  if (tree.missing.length > 0) issues.push({ severity: 'low', code: 'missing-dependencies', message: `${tree.missing.length} declared dependencies are not installed`, location: tree.missing.slice(0, 5).join(', '), own: true });
  if (tree.unreadable.length > 0) issues.push({ severity: 'low', code: 'unreadable-package', message: `${tree.unreadable.length} package.json files could not be read (invalid, or a link out of the folder)`, location: tree.unreadable[0], own: true });
  if (tree.truncated) issues.push({ severity: 'info', code: 'tree-truncated', message: 'the dependency tree was cut at its size limit', own: true });
  return issues;
}

async function analyseFiles(context: StageContext, codeDir: string, files: readonly CodeFile[], limits: CodeFileLimits): Promise<{ findings: LocatedFinding[]; unreadable: number }> {
  const findings: LocatedFinding[] = [];
  let unreadable = 0;
  for (const [index, file] of files.entries()) {
    if (context.signal.aborted) throw context.signal.reason ?? new Error('static analysis aborted');
    if (index > 0 && index % 500 === 0) context.progress(`static analysis: ${index} / ${files.length} files`);
    let text: string | undefined;
    try {
      // Sized from the walk's lstat: readSourceFile allocates its cap up front.
      text = await readSourceFile(codeDir, file.path, { maxBytes: Math.min(limits.maxFileBytes, file.size + 4096) });
    } catch (error) {
      if (!(error instanceof SourceFileError)) throw error;
    }
    if (text === undefined) {
      unreadable++;
      continue;
    }
    for (const finding of analyseSource(file.path, text)) findings.push({ ...finding, own: file.own, packageName: file.packageName, file: file.path });
  }
  return { findings, unreadable };
}

/** Creates the static analysis stage; `limits` are for tests and the bench. */
export function createStaticAnalysisStage(options: { limits?: CodeFileLimits } = {}): Stage {
  const limits = options.limits ?? DEFAULT_CODE_FILE_LIMITS;
  return async (context): Promise<StageResult> => {
    const { subject } = context;
    if (subject.codeDir === null) {
      return { score: 50, issues: [{ severity: 'info', code: 'no-code', message: 'a remote plugin: there is no code to analyse' }], metrics: { files: 0 } };
    }
    if (subject.sourceType === 'container') {
      // Issue #26: the code is inside an image this stage does not open; its folder holds only container.json.
      return { score: 0, issues: [{ severity: 'medium', code: 'container-image-unseen', message: `a container image (${String(subject.source['image'] ?? 'unknown')}): its code is inside the image, which static analysis does not open; nothing here vouches for it` }], metrics: { files: 0 } };
    }
    context.progress('static analysis: reading the dependency tree');
    const { root, ownDir } = codeLayout(subject.codeDir, subject.source);
    const tree = await readPackageTree(root, { ownDir });
    const { files, skipped } = await listCodeFiles(root, tree.packages, limits, ANALYSED_FILES, ownDir);
    // A Python plugin's venv (issue #26): its own distribution is own code, what it requires its dependency tree.
    const packageName = subject.source['packageName'];
    const python = await readPythonTree(root, ownDir, ANALYSED_FILES, typeof packageName === 'string' ? packageName : undefined);
    if (python !== undefined) {
      const ordered = [...python.packages].sort((a, b) => Number(b.own) - Number(a.own));
      await addListedFiles(root, ordered.flatMap((pkg) => pkg.files.map((path) => ({ path, own: pkg.own, packageName: pkg.name }))), files, skipped, limits);
      tree.packages.push(...python.packages.map(({ files: _files, ...pkg }) => pkg));
      tree.missing.push(...python.missing);
    }
    context.progress(`static analysis: parsing ${files.length} files`);
    const { findings, unreadable } = await analyseFiles(context, root, files, limits);
    const dependencies = tree.packages.filter((pkg) => !pkg.own).length;
    const issues = [...aggregateFindings(findings, declaresNetwork(subject)), ...installScriptIssues(tree), ...treeIssues(tree, dependencies)];
    const left = skipped.tooLarge + skipped.overLimit + unreadable;
    if (left > 0) {
      issues.push({ severity: 'info', code: 'files-skipped', message: `${left} code files not analysed (${skipped.tooLarge} over ${limits.maxFileBytes} bytes, ${skipped.overLimit} over the file / size budget, ${unreadable} unreadable)`, own: true });
    }
    const score = scoreIssues(issues);
    const cap = capOf(findings);
    const severityOrder = ['critical', 'high', 'medium', 'low', 'info'];
    const ordered = issues.sort((a, b) => severityOrder.indexOf(a.severity) - severityOrder.indexOf(b.severity) || Number(b.own) - Number(a.own));
    return {
      score,
      issues: ordered.map(({ own: _own, ...issue }) => issue),
      ...(cap === undefined ? {} : { cap }),
      metrics: {
        files: files.length,
        ownFiles: files.filter((file) => file.own).length,
        bytes: files.reduce((sum, file) => sum + file.size, 0),
        packages: tree.packages.length,
        dependencies,
        skipped: { ...skipped, unreadable },
      },
    };
  };
}

/** The stage with default bounds. */
export const staticAnalysisStage: Stage = createStaticAnalysisStage();
