/**
 * @module cli/commands/verify
 * Verification from the command line (seed 000 §4.2, issue #10):
 * - `quiver plugin verify NAME [--json]` runs every stage now, progress per stage on stderr, the
 *   signed report on stdout (a summary, or the whole report with --json);
 * - `quiver plugin verification NAME [--json]` shows the latest stored report;
 * - `quiver verify-report check FILE [--public-key PEM]` checks a saved report's signature
 *   offline: exit 0 when valid, 1 with the reason when not (one changed value is enough);
 * - `quiver verify-report public-key` prints the hub's public key (PEM).
 * Like every command, they run inside `quiver serve` when it holds the data folder.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { invalidInput, notFound, QuiverError, ErrorCodes } from '../../core/errors.ts';
import type { PipelineProgress } from '../../verification/pipeline.ts';
import type { VerificationReport } from '../../verification/report.ts';
import { checkReportSignature } from '../../verification/signing.ts';
import { STAGE_ORDER } from '../../verification/types.ts';
import { EXIT_CODES, formatTable, printJson, type CliContext, type CommandSpec } from '../command.ts';

/** One progress line per stage start and end (stderr). */
export function progressLine(progress: PipelineProgress): string {
  if (progress.event === 'start') return `verify: ${progress.stage} …\n`;
  if (progress.event === 'message') return `verify:   ${progress.message}\n`;
  return `verify: ${progress.stage} ${progress.status === 'passed' ? progress.score : `${progress.score} (${progress.status})`} in ${progress.durationMs} ms\n`;
}

/** The human summary of a report: stages, verdict and the issues worth reading. */
export function formatReport(report: VerificationReport): string {
  // Stage order, not the stored object's key order (jsonb reorders keys).
  const stages = STAGE_ORDER.filter((name) => report.stages[name] !== undefined).map((name) => [name, report.stages[name]] as const);
  const rows = stages.map(([name, stage]) => [name, stage.status, stage.score, `${stage.durationMs} ms`, stage.issues.length]);
  const lines = [
    `${report.pluginId} ${report.version}: score ${report.overallScore} (grade ${report.grade}), trust ${report.recommendation.trustLevel}, ` +
      `execution ${report.recommendation.executionMode}, approved ${report.recommendation.approved ? 'yes' : 'no'}`,
    formatTable(['STAGE', 'STATUS', 'SCORE', 'TIME', 'ISSUES'], rows).trimEnd(),
  ];
  for (const cap of report.recommendation.caps) lines.push(`capped at ${cap.level} by ${cap.stage}: ${cap.reason}`);
  const notable = stages.flatMap(([name, stage]) =>
    stage.issues.filter((issue) => issue.severity !== 'info' && issue.severity !== 'low').map((issue) => `  ${issue.severity} ${name}/${issue.code}${issue.location ? ` (${issue.location})` : ''}: ${issue.message}`),
  );
  if (notable.length > 0) lines.push('issues:', ...notable.slice(0, 20), ...(notable.length > 20 ? [`  … ${notable.length - 20} more (--json shows all)`] : []));
  lines.push(`report ${report.jobId}, ${report.createdAt}, ${report.durations.totalMs} ms, signed`);
  return `${lines.join('\n')}\n`;
}

function printReport(context: CliContext, report: VerificationReport): void {
  if (context.json) printJson(context.io, report);
  else context.io.stdout(formatReport(report));
}

const verifyCommand: CommandSpec = {
  path: ['plugin', 'verify'],
  summary: 'Verify an installed plugin now (seven stages, signed report); progress on stderr.',
  usage: 'NAME [--json]',
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin verify NAME');
    const app = await context.openApp();
    const report = await app.verification.verify(name, { onProgress: (progress) => context.io.stderr(progressLine(progress)) });
    printReport(context, report);
    return EXIT_CODES.ok;
  },
};

const showCommand: CommandSpec = {
  path: ['plugin', 'verification'],
  summary: 'Show the latest verification report of a plugin.',
  usage: 'NAME [--json]',
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin verification NAME');
    const report = await (await context.openApp()).verification.latestReport(name);
    if (report === undefined) throw notFound('verification report of plugin', name);
    printReport(context, report);
    return EXIT_CODES.ok;
  },
};

async function readText(context: CliContext, file: string, what: string): Promise<string> {
  try {
    return await readFile(resolve(context.cwd, file), 'utf8');
  } catch (error) {
    throw new QuiverError(ErrorCodes.notFound, `cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

const checkCommand: CommandSpec = {
  path: ['verify-report', 'check'],
  summary: "Check a saved report's signature offline; exit 0 when valid, 1 with the reason when not.",
  usage: 'FILE [--public-key PEM_FILE]',
  options: {
    'public-key': { type: 'string', valueName: 'PEM_FILE', description: 'the public key to check against', defaultHelp: "this hub's key" },
  },
  async run(context) {
    const [file] = context.args.positionals;
    if (!file) throw invalidInput('usage: quiver verify-report check FILE [--public-key PEM_FILE]');
    const text = await readText(context, file, 'the report');
    const keyFile = context.args.values['public-key'];
    const publicKeyPem = typeof keyFile === 'string' ? await readText(context, keyFile, 'the public key') : (await (await context.openApp()).verification.publicKey()).publicKeyPem;
    let report: unknown;
    try {
      report = JSON.parse(text);
    } catch {
      report = undefined;
    }
    const check = report === undefined ? { valid: false, reason: `${file} is not valid JSON` } : checkReportSignature(report, publicKeyPem);
    if (context.json) printJson(context.io, { file, ...check });
    else if (check.valid) context.io.stdout(`${file}: ${check.reason}\n`);
    else context.io.stderr(`${file}: INVALID: ${check.reason}\n`);
    return check.valid ? EXIT_CODES.ok : EXIT_CODES.failure;
  },
};

const publicKeyCommand: CommandSpec = {
  path: ['verify-report', 'public-key'],
  summary: "Print the hub's Ed25519 public key (PEM) that checks report signatures.",
  usage: '[--json]',
  async run(context) {
    const key = await (await context.openApp()).verification.publicKey();
    if (context.json) printJson(context.io, key);
    else context.io.stdout(key.publicKeyPem.endsWith('\n') ? key.publicKeyPem : `${key.publicKeyPem}\n`);
    return EXIT_CODES.ok;
  },
};

/** The verification commands. */
export const verifyCommands: CommandSpec[] = [verifyCommand, showCommand, checkCommand, publicKeyCommand];
