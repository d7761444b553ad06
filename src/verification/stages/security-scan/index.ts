/**
 * @module verification/stages/security-scan
 * Stage 5 of seed 000 §4.2, security scan (issue #10): known vulnerabilities of the installed
 * dependency tree (npm registry advisories), hard-coded secrets in the plugin's own files,
 * licences against the allow-list, and tool poisoning in what the plugin serves to the model.
 *
 * Scoring: start at 100 and deduct per issue:
 * - tool poisoning: 40 per finding (critical), and the verdict is capped at UNVERIFIED;
 * - advisories: critical 25, high 15, moderate 6, low 2 per advisory and installed version;
 * - secrets: 15 per finding (high), at most 45 together;
 * - licences: the plugin's own licence disallowed 15 (high), a dependency's 6 (medium), the
 *   plugin's own licence unknown 2 (low), a dependency's unknown 0 (info); at most 30 together.
 * The registry is asked about every installed dependency, and about the plugin's own package
 * only when it was installed from npm (a folder or git plugin's name may be private).
 * When the advisories cannot be fetched the issue says so and the verdict is capped at
 * COMMUNITY; the score only counts what was found (the cap says what could not be checked).
 */
import { readSourceFile, SourceFileError } from '../../../plugins/source-files.ts';
import type { TrustLevel } from '../../../runtime/types.ts';
import type { Stage, StageContext, StageIssue, StageResult } from '../../types.ts';
import { DEFAULT_CODE_FILE_LIMITS, listCodeFiles } from '../static-analysis/code-files.ts';
import { codeLayout, readPackageTree, type InstalledPackage } from '../static-analysis/package-tree.ts';
import { lookupAdvisories, type Advisory } from './advisories.ts';
import { judgeLicence, usableAllowList } from './licences.ts';
import { detectToolPoisoning } from './poisoning.ts';
import { scanSecrets } from './secrets.ts';

/** An issue with the points it costs. */
type ScoredIssue = StageIssue & { points: number; group?: 'secrets' | 'licences' };

const ADVISORY_POINTS: Record<Advisory['severity'], number> = { critical: 25, high: 15, moderate: 6, low: 2, info: 0 };
const ADVISORY_SEVERITY: Record<Advisory['severity'], StageIssue['severity']> = { critical: 'critical', high: 'high', moderate: 'medium', low: 'low', info: 'info' };
const GROUP_CAPS = { secrets: 45, licences: 30 } as const;
/** Files a secret may hide in: code, configuration, keys, dotenv. */
const SECRET_FILES = /\.((m|c)?(j|t)sx?|json|ya?ml|toml|ini|pem|key|cfg|conf|properties)$|^\.env|^\.npmrc$/;

function poisoningIssues(context: StageContext): ScoredIssue[] {
  const { subject } = context;
  return detectToolPoisoning(subject.tools, { otherToolNames: subject.otherToolNames }).map((finding) => ({
    severity: 'critical',
    code: `poisoning-${finding.kind}`,
    message: `tool poisoning (${finding.kind}): ${finding.rule}, in ${finding.field}`,
    location: `tool:${finding.tool}`,
    points: 40,
  }));
}

async function advisoryIssues(context: StageContext, packages: readonly InstalledPackage[]): Promise<{ issues: ScoredIssue[]; unavailable?: string; queried: number }> {
  const versions: Record<string, string[]> = {};
  // A folder or git plugin's own name is not sent: it may be private, and the registry's
  // advisories are about a published package of that name, not this code.
  const published = packages.filter((pkg) => !pkg.own || context.subject.sourceType === 'npm');
  for (const pkg of published) versions[pkg.name] = [...new Set([...(versions[pkg.name] ?? []), pkg.version])];
  if (Object.keys(versions).length === 0) return { issues: [], queried: 0 };
  context.progress(`security scan: advisories for ${published.length} packages`);
  // Half the stage's time at most: a hanging registry must end as "unavailable", not as a stage timeout.
  const lookup = await lookupAdvisories(context.settings.registryUrl, versions, context.signal, Math.min(20_000, Math.floor(context.settings.stageTimeoutMs / 2)));
  if (!lookup.ok) return { issues: [{ severity: 'medium', code: 'advisories-unavailable', message: `known vulnerabilities could not be checked: ${lookup.reason}`, points: 0 }], unavailable: lookup.reason, queried: published.length };
  const issues: ScoredIssue[] = [];
  for (const [name, advisories] of Object.entries(lookup.advisories)) {
    for (const advisory of advisories) {
      issues.push({
        severity: ADVISORY_SEVERITY[advisory.severity],
        code: 'vulnerable-dependency',
        message: `${advisory.severity} advisory ${advisory.id}: ${advisory.title}${advisory.vulnerable_versions === undefined ? '' : ` (affects ${advisory.vulnerable_versions})`}`,
        location: `${name}@${(versions[name] ?? []).join(',')}`,
        points: ADVISORY_POINTS[advisory.severity],
      });
    }
  }
  return { issues, queried: published.length };
}

function licenceIssues(context: StageContext, packages: readonly InstalledPackage[]): ScoredIssue[] {
  const allowList = usableAllowList(context.settings.licenseAllowList);
  const issues: ScoredIssue[] = [];
  for (const pkg of packages) {
    const verdict = judgeLicence(pkg, allowList);
    const location = `${pkg.name}@${pkg.version}`;
    const who = pkg.own ? 'the plugin' : `dependency ${pkg.name}`;
    if (verdict.status === 'disallowed') {
      issues.push({ severity: pkg.own ? 'high' : 'medium', code: 'licence-not-allowed', message: `${who} is licensed ${verdict.expression}, not on the allow-list`, location, points: pkg.own ? 15 : 6, group: 'licences' });
    } else if (verdict.status === 'unknown') {
      issues.push({ severity: pkg.own ? 'low' : 'info', code: 'licence-unknown', message: `${who}: licence cannot be checked (${verdict.reason})`, location, points: pkg.own ? 2 : 0, group: 'licences' });
    }
  }
  return issues;
}

async function secretIssues(context: StageContext, codeDir: string, ownDir: string, packages: readonly InstalledPackage[]): Promise<{ issues: ScoredIssue[]; files: number }> {
  const own = packages.filter((pkg) => pkg.own);
  const { files } = await listCodeFiles(codeDir, own, DEFAULT_CODE_FILE_LIMITS, SECRET_FILES, ownDir);
  const issues: ScoredIssue[] = [];
  for (const file of files) {
    if (context.signal.aborted) throw context.signal.reason ?? new Error('security scan aborted');
    const text = await readSourceFile(codeDir, file.path, { maxBytes: Math.min(DEFAULT_CODE_FILE_LIMITS.maxFileBytes, file.size + 4096) }).catch((error: unknown) => {
      if (error instanceof SourceFileError) return undefined;
      throw error;
    });
    if (text === undefined) continue;
    for (const finding of scanSecrets(text)) {
      issues.push({ severity: 'high', code: 'hard-coded-secret', message: `a hard-coded secret (${finding.kind})`, location: `${file.path}:${finding.line}`, points: 15, group: 'secrets' });
    }
  }
  return { issues, files: files.length };
}

function score(issues: readonly ScoredIssue[]): number {
  const grouped = { secrets: 0, licences: 0 };
  let free = 0;
  for (const issue of issues) {
    if (issue.group === undefined) free += issue.points;
    else grouped[issue.group] += issue.points;
  }
  const total = free + Math.min(GROUP_CAPS.secrets, grouped.secrets) + Math.min(GROUP_CAPS.licences, grouped.licences);
  return Math.max(0, 100 - total);
}

/**
 * The highest level the verdict may give. Poisoning keeps a plugin in the strictest sandbox. A
 * critical known vulnerability, or vulnerabilities that could not be checked, keep it sandboxed
 * with an allow-list (COMMUNITY): levels above run outside the sandbox, which a score alone must
 * not earn while such a hole is open or unknown (fail closed).
 */
function capOf(poisoned: number, criticalAdvisories: number, unavailable: string | undefined): { level: TrustLevel; reason: string } | undefined {
  if (poisoned > 0) return { level: 'UNVERIFIED', reason: `tool poisoning in ${poisoned} place${poisoned === 1 ? '' : 's'}` };
  if (criticalAdvisories > 0) return { level: 'COMMUNITY', reason: `${criticalAdvisories} critical known vulnerabilit${criticalAdvisories === 1 ? 'y' : 'ies'} in the dependencies` };
  if (unavailable !== undefined) return { level: 'COMMUNITY', reason: `known vulnerabilities not checked: ${unavailable}` };
  return undefined;
}

/** The security scan stage. */
export const securityScanStage: Stage = async (context): Promise<StageResult> => {
  const { subject } = context;
  const poisoning = poisoningIssues(context);
  const issues: ScoredIssue[] = [...poisoning];
  let unavailable: string | undefined;
  const metrics: Record<string, unknown> = { tools: subject.tools.length, poisoningFindings: poisoning.length };
  if (subject.codeDir === null) {
    issues.push({ severity: 'info', code: 'no-code', message: 'a remote plugin: no dependency tree, files or licences to scan', points: 0 });
  } else {
    const { root, ownDir } = codeLayout(subject.codeDir, subject.source);
    const tree = await readPackageTree(root, { ownDir });
    const advisories = await advisoryIssues(context, tree.packages);
    unavailable = advisories.unavailable;
    const secrets = await secretIssues(context, root, ownDir, tree.packages);
    issues.push(...advisories.issues, ...secrets.issues, ...licenceIssues(context, tree.packages));
    Object.assign(metrics, { packages: tree.packages.length, advisoriesQueried: advisories.queried, advisoriesAvailable: unavailable === undefined, filesScannedForSecrets: secrets.files });
  }
  const criticalAdvisories = issues.filter((issue) => issue.code === 'vulnerable-dependency' && issue.severity === 'critical').length;
  const cap = capOf(poisoning.length, criticalAdvisories, unavailable);
  return {
    score: score(issues),
    issues: issues.map(({ points: _points, group: _group, ...issue }) => issue),
    ...(cap === undefined ? {} : { cap }),
    metrics,
  };
};
