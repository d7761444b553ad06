/**
 * @module verification/types
 * The contract between the verification pipeline (seed 000 §4.2, issue #10) and its stages.
 * A stage is a function from what was installed (the subject) to a score 0–100 with the
 * issues that lowered it. Stages never write to the database and never start a process
 * outside the sandbox; the pipeline runs them in order, weighs them and signs the report.
 */
import type { Logger } from '../core/logger.ts';
import type { TrustLevel, UpstreamSpecInput } from '../runtime/types.ts';

/** The six scored stages, as named in the report (seed 000 Appendix B uses the camelCase form). */
export type StageName = 'source' | 'staticAnalysis' | 'schemaValidation' | 'sandboxExecution' | 'securityScan' | 'compatibility';

/** Stage order, as the pipeline runs them; the verdict is the seventh step. */
export const STAGE_ORDER: readonly StageName[] = ['source', 'staticAnalysis', 'schemaValidation', 'sandboxExecution', 'securityScan', 'compatibility'];

/** Seed 000 §4.2 weights of the verdict; `source` is reported but not weighted. */
export const STAGE_WEIGHTS: Readonly<Record<Exclude<StageName, 'source'>, number>> = {
  staticAnalysis: 0.2,
  schemaValidation: 0.15,
  sandboxExecution: 0.25,
  securityScan: 0.25,
  compatibility: 0.15,
};

export type IssueSeverity = 'info' | 'low' | 'medium' | 'high' | 'critical';

/** One finding of a stage. `code` is stable (tests and the UI key on it); `message` is for people. */
export interface StageIssue {
  severity: IssueSeverity;
  code: string;
  message: string;
  /** Where: `file:line`, `tool:NAME`, `package@version`… (never file content or secret values). */
  location?: string;
}

/** What one stage found. */
export interface StageResult {
  /** 0–100, integer. */
  score: number;
  issues: StageIssue[];
  /**
   * The highest trust level the verdict may give whatever the score (e.g. advisories
   * unreachable → COMMUNITY; tool poisoning → UNVERIFIED), with why.
   */
  cap?: { level: TrustLevel; reason: string };
  /** Measurements worth keeping in the report (counts, peak memory, latencies…); JSON only. */
  metrics?: Record<string, unknown>;
}

/** A tool as the plugin served it at discovery (every field the plugin declared). */
export interface SubjectTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** What is verified: one installed version of one plugin. */
export interface VerificationSubject {
  pluginId: string;
  pluginName: string;
  version: string;
  sourceType: 'git' | 'npm' | 'path' | 'url' | 'sync' | 'openapi' | 'pypi' | 'container';
  /** Source details as installed (git: url, ref, commit; npm: package, version, integrity…). */
  source: Record<string, unknown>;
  /** The installed code folder (read it through plugins/source-files.ts), null for remote plugins. */
  codeDir: string | null;
  manifest: Record<string, unknown> | null;
  /** The stored Plugin Intelligence Document, when there is one. */
  intelligence: Record<string, unknown> | null;
  tools: SubjectTool[];
  /** Tool names of every *other* installed plugin (shadowing checks). */
  otherToolNames: string[];
  /**
   * How to start this version in the strictest sandbox (UNVERIFIED: no network, read-only code,
   * limits); stages that run the plugin start it from this, never with more privilege.
   */
  launch: UpstreamSpecInput | null;
}

/** Settings of the pipeline that stages read (from config; tests shorten timeouts). */
export interface VerificationSettings {
  /** npm registry base URL for advisories and provenance. */
  registryUrl: string;
  /** SPDX licence ids accepted without an issue. */
  licenseAllowList: readonly string[];
  /** Per-stage time limit, ms. */
  stageTimeoutMs: number;
  /**
   * The SSRF guard on a remote plugin's probe connection (issue #27): the non-public addresses
   * admitted (QUIVER_REMOTE_ALLOW_ADDRESSES; undefined admits none). Absent: no guard (callers
   * that probe a server they started themselves).
   */
  remoteNetwork?: { allowAddresses?: string | undefined } | undefined;
}

/** Everything a stage receives. */
export interface StageContext {
  subject: VerificationSubject;
  settings: VerificationSettings;
  logger: Logger;
  signal: AbortSignal;
  /** Progress lines for `quiver plugin verify` (short, no secrets). */
  progress(message: string): void;
}

/** A stage. It must honour `signal` and never throw for findings (throwing = the stage errored). */
export type Stage = (context: StageContext) => Promise<StageResult>;
