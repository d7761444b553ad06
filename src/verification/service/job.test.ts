/** The background job verifies only the version it was queued for, and skips removed plugins. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { JobRecord } from '../../jobs/index.ts';
import type { VerificationReport } from '../report.ts';
import { verificationJobHandler } from './job.ts';

const job = (payload: Record<string, unknown>) => ({ job: { payload } as JobRecord, signal: new AbortController().signal });
const plugin = (status: string, version: string | null) => async () => ({ plugin: { status, version } }) as never;

it('verifies the queued version; skips a removed plugin or one that moved on', async () => {
  const verified: string[] = [];
  const verify = async (id: string) => {
    verified.push(id);
    return { jobId: 'ver-1', overallScore: 50, recommendation: { trustLevel: 'COMMUNITY' } } as VerificationReport;
  };
  assert.deepEqual(await verificationJobHandler({ show: plugin('active', '1.0.0') }, verify)(job({ pluginId: 'p', version: '1.0.0' })), {
    reportJobId: 'ver-1',
    overallScore: 50,
    trustLevel: 'COMMUNITY',
  });
  assert.deepEqual(await verificationJobHandler({ show: plugin('active', '2.0.0') }, verify)(job({ pluginId: 'p', version: '1.0.0' })), { skipped: 'plugin is now at version 2.0.0' });
  assert.deepEqual(await verificationJobHandler({ show: plugin('removed', '1.0.0') }, verify)(job({ pluginId: 'p', version: '1.0.0' })), { skipped: 'plugin removed' });
  assert.deepEqual(await verificationJobHandler({ show: plugin('active', null) }, verify)(job({ pluginId: 'p', version: 'local' })), { reportJobId: 'ver-1', overallScore: 50, trustLevel: 'COMMUNITY' });
  await assert.rejects(verificationJobHandler({ show: plugin('active', '1') }, verify)(job({})), /without pluginId/);
  assert.deepEqual(verified, ['p', 'p']);
});
