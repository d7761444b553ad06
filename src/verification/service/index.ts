/**
 * @module verification/service
 * The verification service (seed 000 §4.2, issue #10): `verify` runs the pipeline on an
 * installed plugin now (the CLI, with progress), `enqueue` queues the same run as a background
 * job (after every install and update, and on demand through the API), and every run ends the
 * same way: the verdict, a report signed with the hub key, stored, the plugin's verified trust
 * score and level written, and `onVerified` called (app.ts drops cached launch specs there; the
 * effective-trust service of issue #10 combines the level with grants and dynamic trust).
 */
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import type { Jobs, JobRecord } from '../../jobs/index.ts';
import type { SecretBox } from '../../plugins/secret-box.ts';
import type { Database } from '../../store/database.ts';
import { runPipeline, type PipelineProgress, type PipelineResult, type RunPipelineOptions } from '../pipeline.ts';
import { buildReport, newReportJobId, type VerificationReport } from '../report.ts';
import { hubPublicKey, loadHubSigningKey, signReport } from '../signing.ts';
import { buildStagedSubject, buildSubject, type StagedSubjectInput, type SubjectSource } from '../subject.ts';
import type { Stage, StageName, VerificationSettings, VerificationSubject } from '../types.ts';
import { computeVerdict } from '../verdict.ts';
import { VERIFICATION_JOB_KIND, verificationJobHandler } from './job.ts';
import { listReports, storeReport, type StoredReport } from './store.ts';

export { VERIFICATION_JOB_KIND };

/** Options of `createVerificationService`. */
export interface VerificationServiceOptions {
  db: Database;
  plugins: SubjectSource;
  /** Seals the hub's private signing key at rest. */
  secrets: SecretBox;
  settings: VerificationSettings;
  /**
   * The stages the in-process pipeline runs (stages/index.ts `stageRegistry`); missing ones are
   * recorded `not_run`. Not needed with a `runPipeline` that brings its own (the app's
   * `runPipelineIsolated` runs the registered stages in a child process), so an app that never
   * verifies in this process never loads them (issue #28: idle memory).
   */
  stages?: Partial<Record<StageName, Stage>>;
  /**
   * Runs the pipeline: in this process by default (with `stages`); the app passes
   * `runPipelineIsolated` (verification/isolated), which runs the registered stages in a child process.
   */
  runPipeline?: (options: RunPipelineOptions) => Promise<PipelineResult>;
  /** When given, background runs are queued here and its worker runs them. */
  jobs?: Jobs;
  logger?: Logger;
  clock?: () => Date;
  /** Called after a report is stored (and the plugin's trust columns written, when it still had that version). */
  onVerified?: (pluginId: string, report: VerificationReport) => void;
}

/** The verification service. */
export interface VerificationService {
  /** Verifies an installed plugin now and returns its signed, stored report. */
  verify(plugin: string, options?: { onProgress?: (progress: PipelineProgress) => void; signal?: AbortSignal }): Promise<VerificationReport>;
  /**
   * Verifies a version staged beside the installed one (issue #11: before its rollout takes
   * traffic). The signed report is stored, but the plugin's trust columns and tool pins stay
   * the installed version's; promotion re-verifies as every update does.
   */
  verifyStaged(input: StagedSubjectInput, options?: { signal?: AbortSignal }): Promise<VerificationReport>;
  /** Queues a background verification of the installed version (deduplicated per plugin version). */
  enqueue(plugin: string, reason: string): Promise<JobRecord>;
  /** After a committed install, update or sync: queues a verification when the plugin is active, else nothing. */
  enqueueAfterInstall(pluginId: string): Promise<JobRecord | undefined>;
  /** The newest report of a plugin, or undefined when it was never verified. */
  latestReport(plugin: string): Promise<VerificationReport | undefined>;
  /** Reports of a plugin, newest first. */
  reports(plugin: string, options?: { limit?: number }): Promise<StoredReport[]>;
  /** A background verification job by id (undefined for unknown ids and other kinds of job). */
  job(id: string): Promise<JobRecord | undefined>;
  /** The hub's public key (PEM) and key id. */
  publicKey(): Promise<{ keyId: string; publicKeyPem: string }>;
}

/** Creates the service and, when `jobs` is given, registers its job handler. */
export function createVerificationService(options: VerificationServiceOptions): VerificationService {
  const { db, plugins, secrets } = options;
  const logger = (options.logger ?? silentLogger).child({ part: 'verification' });
  const now = options.clock ?? (() => new Date());

  async function verify(reference: string, verifyOptions: { onProgress?: (progress: PipelineProgress) => void; signal?: AbortSignal } = {}): Promise<VerificationReport> {
    return verifySubject(await buildSubject(plugins, reference), verifyOptions, true);
  }

  /** Runs, signs and stores; `installed` false for a staged version (no trust columns, no onVerified). */
  async function verifySubject(
    subject: VerificationSubject,
    verifyOptions: { onProgress?: (progress: PipelineProgress) => void; signal?: AbortSignal },
    installed: boolean,
  ): Promise<VerificationReport> {
    const key = await loadHubSigningKey(db, secrets);
    const createdAt = now();
    const pipeline = await (options.runPipeline ?? runPipeline)({
      subject,
      stages: options.stages ?? {},
      settings: options.settings,
      logger,
      ...(verifyOptions.signal ? { signal: verifyOptions.signal } : {}),
      ...(verifyOptions.onProgress ? { onProgress: verifyOptions.onProgress } : {}),
    });
    verifyOptions.signal?.throwIfAborted();
    const verdict = computeVerdict(pipeline.stages);
    // A JSON round trip first: the signed bytes are exactly what any reader of the JSON gets.
    const unsigned = JSON.parse(JSON.stringify(buildReport({ jobId: newReportJobId(createdAt), subject, pipeline, verdict, createdAt }))) as Omit<VerificationReport, 'signature'>;
    const report: VerificationReport = { ...unsigned, signature: signReport(unsigned, key) };
    const { trustWritten } = await storeReport(db, report, key.keyId, { writeTrust: installed });
    logger.info({ plugin: subject.pluginName, version: subject.version, score: report.overallScore, level: report.recommendation.trustLevel, trustWritten, staged: !installed }, 'plugin verified');
    if (!installed) return report;
    try {
      options.onVerified?.(subject.pluginId, report);
    } catch (error) {
      logger.warn({ err: error }, 'onVerified subscriber threw');
    }
    return report;
  }

  async function pluginIdOf(reference: string): Promise<{ id: string; name: string; version: string }> {
    const { plugin } = await plugins.show(reference);
    return { id: plugin.id, name: plugin.name, version: plugin.version ?? 'local' };
  }

  options.jobs?.register(VERIFICATION_JOB_KIND, verificationJobHandler(plugins, verify));

  async function enqueue(reference: string, reason: string): Promise<JobRecord> {
    if (options.jobs === undefined) throw new QuiverError(ErrorCodes.unavailable, 'background verification is not wired into this hub');
    const plugin = await pluginIdOf(reference);
    return options.jobs.enqueue(VERIFICATION_JOB_KIND, { pluginId: plugin.id, plugin: plugin.name, version: plugin.version, reason }, { dedupeKey: `verify:${plugin.id}:${plugin.version}` });
  }

  return {
    verify,
    verifyStaged: async (input, verifyOptions = {}) => verifySubject(await buildStagedSubject(plugins, input), verifyOptions, false),
    enqueue,
    async enqueueAfterInstall(pluginId) {
      if (options.jobs === undefined) return undefined;
      const details = await plugins.show(pluginId).catch(() => undefined);
      if (details === undefined || details.plugin.status !== 'active') return undefined;
      return enqueue(pluginId, 'installed or updated');
    },
    async latestReport(reference) {
      const plugin = await pluginIdOf(reference);
      return (await listReports(db, plugin.id, 1))[0]?.report;
    },
    async reports(reference, listOptions = {}) {
      const plugin = await pluginIdOf(reference);
      return listReports(db, plugin.id, Math.max(1, Math.min(500, listOptions.limit ?? 50)));
    },
    async job(id) {
      if (options.jobs === undefined || !/^[0-9a-f-]{36}$/i.test(id)) return undefined;
      const job = await options.jobs.get(id);
      return job?.kind === VERIFICATION_JOB_KIND ? job : undefined;
    },
    publicKey: () => hubPublicKey(db, secrets),
  };
}

export type { StoredReport } from './store.ts';
