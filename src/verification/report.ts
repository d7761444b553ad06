/**
 * @module verification/report
 * The verification report in the shape of seed 000 Appendix B (`jobId`, `pluginId`, `version`,
 * `overallScore`, `grade`, `stages{name: {score, issues}}`, `recommendation{approved,
 * executionMode, trustLevel}`, `signature`), plus what Quiver needs to trust it later: when it
 * was made, a hash of exactly what was verified (and of every tool definition, for tool
 * pinning), each stage's status and duration, and the caps that bounded the level.
 * Stage issues are objects (severity, code, message, location) rather than Appendix B's strings.
 */
import { randomBytes } from 'node:crypto';
import { contentHash } from '../core/hash.ts';
import { definitionHash } from '../trust/pinning/definition.ts';
import type { TrustLevel } from '../runtime/types.ts';
import type { PipelineResult, StageOutcome } from './pipeline.ts';
import type { StageName, SubjectTool, VerificationSubject } from './types.ts';
import type { Verdict } from './verdict.ts';

/** Report format version, so readers can tell shapes apart later. */
export const REPORT_FORMAT = 'quiver-verification/1';

/** A signed verification report. */
export interface VerificationReport {
  format: typeof REPORT_FORMAT;
  jobId: string;
  /** The plugin's name (Appendix B's `pluginId` is the plugin's public identifier). */
  pluginId: string;
  /** The plugin row's id in this hub. */
  pluginUuid: string;
  version: string;
  createdAt: string;
  subject: {
    sourceType: VerificationSubject['sourceType'];
    /** SHA-256 of the canonical JSON of what was verified (source, manifest, PID, tools). */
    hash: string;
    /** SHA-256 per tool of its served definition (name, title, description, schemas, annotations). */
    toolHashes: Record<string, string>;
  };
  overallScore: number;
  grade: string;
  stages: Record<StageName, StageOutcome>;
  recommendation: {
    approved: boolean;
    executionMode: string;
    trustLevel: TrustLevel;
    /** The level the score alone gives, and the caps that lowered it. */
    scoreTrustLevel: TrustLevel;
    caps: Verdict['caps'];
  };
  durations: { totalMs: number; stages: Record<StageName, number> };
  signature: string;
}

/** A report before it is signed. */
export type UnsignedReport = Omit<VerificationReport, 'signature'>;

/** A job id in Appendix B's style: `ver-YYYY-MM-DD-<12 hex>`. */
export function newReportJobId(now: Date): string {
  return `ver-${now.toISOString().slice(0, 10)}-${randomBytes(6).toString('hex')}`;
}

/**
 * The hash that pins one tool's definition (what a rug pull would change): tool pinning's own,
 * so that a passed verification approves exactly what the pin guard compares.
 */
export function toolDefinitionHash(tool: SubjectTool): string {
  return definitionHash(tool);
}

/** The hash of everything a verification looked at, apart from the code folder's bytes (the source stage hashes those). */
export function subjectHash(subject: VerificationSubject): string {
  return contentHash({
    pluginName: subject.pluginName,
    version: subject.version,
    sourceType: subject.sourceType,
    source: subject.source,
    manifest: subject.manifest,
    intelligence: subject.intelligence,
    tools: subject.tools.map(toolDefinitionHash),
  });
}

/** Assembles the unsigned report. */
export function buildReport(input: { jobId: string; subject: VerificationSubject; pipeline: PipelineResult; verdict: Verdict; createdAt: Date }): UnsignedReport {
  const { subject, pipeline, verdict } = input;
  return {
    format: REPORT_FORMAT,
    jobId: input.jobId,
    pluginId: subject.pluginName,
    pluginUuid: subject.pluginId,
    version: subject.version,
    createdAt: input.createdAt.toISOString(),
    subject: {
      sourceType: subject.sourceType,
      hash: subjectHash(subject),
      toolHashes: Object.fromEntries(subject.tools.map((tool) => [tool.name, toolDefinitionHash(tool)])),
    },
    overallScore: verdict.overallScore,
    grade: verdict.grade,
    stages: pipeline.stages,
    recommendation: {
      approved: verdict.approved,
      executionMode: verdict.executionMode,
      trustLevel: verdict.trustLevel,
      scoreTrustLevel: verdict.scoreLevel,
      caps: verdict.caps,
    },
    durations: {
      totalMs: pipeline.totalMs,
      stages: Object.fromEntries(Object.entries(pipeline.stages).map(([name, outcome]) => [name, outcome.durationMs])) as Record<StageName, number>,
    },
  };
}
