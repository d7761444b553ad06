/**
 * A command that installs a plugin and exits (`quiver plugin add` with no server running) closes
 * the app right after the install. The background verification that the install starts
 * (QUIVER_VERIFY_ON_INSTALL=background, the default) must be on the durable job queue before the
 * database closes, not fail with "the embedded database is closed" and leave the plugin
 * unverified until someone asks.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { VERIFICATION_JOB_KIND } from '../../src/verification/service/job.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createPinningPluginFolder } from '../trust/pinning-fixture.ts';
import { createCapturingLogger } from '../runtime/helpers.ts';

describeEachBackend('closing the app right after an install', (backend) => {
  it('waits for the install\'s verification to be queued', async () => {
    const logger = createCapturingLogger();
    const home = await openTempDir('after-install-close');
    const db = await backend.open();
    // When the app closes its database, the verification job must already be queued; the
    // database itself stays open for that count, and closes at the end.
    const countJobs = async () => (await db.query('SELECT 1 FROM jobs WHERE kind = $1', [VERIFICATION_JOB_KIND])).rows.length;
    let jobsWhenClosed: number | undefined;
    const app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://' }), {
      db: { ...db, close: async () => void (jobsWhenClosed = await countJobs()) },
      logger,
    });
    try {
      const folder = await createPinningPluginFolder(home, 'weather-src');
      try {
        await app.plugins.add(folder, { name: 'weather' });
      } finally {
        await app.close();
      }
      // Long enough for work cut off by the close to fail and say so.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(logger.lines.filter((line) => line.includes('queueing a verification failed')), []);
      assert.equal(jobsWhenClosed, 1, 'the install\'s verification job was queued before the database closed');
    } finally {
      await db.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
