/**
 * @module verification/service/job
 * The background verification job (kind `verification.run`): verifies the plugin when it still
 * has the version the job was queued for; a removed plugin, or one already moved on to another
 * version (whose own job verifies it), is skipped with the reason as the job's result.
 */
import type { JobHandler } from '../../jobs/index.ts';
import type { VerificationReport } from '../report.ts';
import type { SubjectSource } from '../subject.ts';

/** The job kind of a background verification. */
export const VERIFICATION_JOB_KIND = 'verification.run';

/** The handler of `verification.run` jobs. */
export function verificationJobHandler(
  plugins: Pick<SubjectSource, 'show'>,
  verify: (plugin: string, options: { signal: AbortSignal }) => Promise<VerificationReport>,
): JobHandler {
  return async ({ job, signal }) => {
    const payload = job.payload as { pluginId?: string; version?: string };
    if (typeof payload.pluginId !== 'string') throw new Error('verification job without pluginId');
    const current = await plugins.show(payload.pluginId).catch(() => undefined);
    if (current === undefined || current.plugin.status === 'removed') return { skipped: 'plugin removed' };
    if ((current.plugin.version ?? 'local') !== payload.version) return { skipped: `plugin is now at version ${current.plugin.version ?? 'local'}` };
    const report = await verify(payload.pluginId, { signal });
    return { reportJobId: report.jobId, overallScore: report.overallScore, trustLevel: report.recommendation.trustLevel };
  };
}
