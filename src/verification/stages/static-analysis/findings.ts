/**
 * @module verification/stages/static-analysis/findings
 * From raw file findings to the stage's issues (issue #10): the severity of each finding
 * depends on whether it is in the plugin's own code or in a dependency (dependencies
 * legitimately compile code — ajv uses `new Function` — spawn processes — cross-spawn — and
 * bundle HTTP servers, so there they weigh less), and one issue is kept per package and
 * kind, with the first location and the count, so a large dependency cannot flood the report.
 */
import type { IssueSeverity, StageIssue } from '../../types.ts';
import type { FileFindingCode } from './file-finding.ts';

interface Rule {
  own: IssueSeverity;
  dependency: IssueSeverity;
  message: string;
}

/** Severity per finding, own code vs dependency; network is decided by declared needs (below). */
export const FINDING_RULES: Record<FileFindingCode, Rule> = {
  'dynamic-process': { own: 'high', dependency: 'low', message: 'starts a process with a command or arguments computed at run time' },
  'process-spawn': { own: 'info', dependency: 'info', message: 'starts a process with a fixed command' },
  eval: { own: 'high', dependency: 'medium', message: 'evaluates code from a string (eval)' },
  'dynamic-code': { own: 'high', dependency: 'low', message: 'compiles code from strings (new Function / vm)' },
  'dynamic-require': { own: 'medium', dependency: 'info', message: 'requires a module whose name is computed at run time' },
  'dynamic-import': { own: 'medium', dependency: 'info', message: 'imports a module whose name is computed at run time' },
  network: { own: 'medium', dependency: 'info', message: 'uses the network' },
  'fs-write': { own: 'low', dependency: 'info', message: 'writes, removes or renames files' },
  minified: { own: 'medium', dependency: 'info', message: 'minified code (very long lines): hard to review' },
  'high-entropy-string': { own: 'medium', dependency: 'info', message: 'a long high-entropy string literal (packed data or an encoded payload)' },
  'encoded-blob': { own: 'high', dependency: 'medium', message: 'decodes a long hex / base64 literal at run time' },
  'escaped-identifier': { own: 'high', dependency: 'medium', message: 'names a property or identifier with \\x / \\u escapes (obfuscation)' },
  'obfuscated-identifiers': { own: 'high', dependency: 'medium', message: 'obfuscator-style _0x identifiers' },
  'raw-socket': { own: 'medium', dependency: 'info', message: 'opens raw TCP / UDP sockets (any host and port, not only HTTP)' },
  'secret-path': { own: 'critical', dependency: 'low', message: 'names a home-directory secret or credential store (.ssh, .aws, .npmrc, keychains…)' },
  'env-enumeration': { own: 'medium', dependency: 'info', message: 'enumerates the whole environment (every variable, secrets included)' },
  'env-serialisation': { own: 'high', dependency: 'low', message: 'serialises the whole environment into text (every variable, secrets included)' },
  'unsafe-deserialise': { own: 'high', dependency: 'low', message: 'deserialises with a format that runs code (pickle, marshal, yaml.load…)' },
};

/** Points lost per issue, by severity; dependency issues lose half, and at most DEPENDENCY_CAP together. */
export const DEDUCTION: Record<IssueSeverity, number> = { info: 0, low: 2, medium: 6, high: 15, critical: 40 };
export const DEPENDENCY_CAP = 25;

/** A finding located in a package. */
export interface LocatedFinding {
  code: FileFindingCode;
  own: boolean;
  packageName: string;
  file: string;
  line: number;
  detail?: string | undefined;
  /** Code execution from data computed at run time (see FileFinding.fromData). */
  fromData?: true | undefined;
}

/** One issue per (package, code), first location kept, count and details in the message. */
export function aggregateFindings(findings: readonly LocatedFinding[], networkDeclared: boolean): Array<StageIssue & { own: boolean }> {
  const groups = new Map<string, { first: LocatedFinding; count: number; details: Set<string> }>();
  for (const finding of findings) {
    const key = `${finding.packageName}\0${finding.code}`;
    const group = groups.get(key) ?? { first: finding, count: 0, details: new Set<string>() };
    group.count++;
    if (finding.detail !== undefined && group.details.size < 6) group.details.add(finding.detail);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ first, count, details }) => {
    const rule = FINDING_RULES[first.code];
    let severity = first.own ? rule.own : rule.dependency;
    let message = rule.message;
    if (first.code === 'network' && first.own) {
      severity = networkDeclared ? 'info' : 'medium';
      message = networkDeclared ? 'uses the network (declared)' : 'uses the network, but the plugin declares no network need';
    }
    if (first.code === 'raw-socket' && first.own && networkDeclared) severity = 'low';
    const detail = details.size > 0 ? ` (${[...details].join(', ')})` : '';
    return {
      severity,
      code: first.code,
      message: `${first.own ? '' : `dependency ${first.packageName}: `}${message}${detail}${count > 1 ? `; ${count} places` : ''}`,
      location: `${first.file}:${first.line}`,
      own: first.own,
    };
  });
}

/** The stage score: 100 minus deductions; dependency issues weigh half and are capped together. */
export function scoreIssues(issues: ReadonlyArray<StageIssue & { own?: boolean }>): number {
  let own = 0;
  let dependency = 0;
  for (const issue of issues) {
    if (issue.own === false) dependency += DEDUCTION[issue.severity] / 2;
    else own += DEDUCTION[issue.severity];
  }
  return Math.max(0, Math.round(100 - own - Math.min(DEPENDENCY_CAP, dependency)));
}
