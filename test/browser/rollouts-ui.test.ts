/**
 * The admin UI's Rollouts view (issue #11) in a real browser: a real App served over HTTP with a
 * plugin from a real git repository, upgraded to its next tag. In Debian's Chromium
 * (playwright-core): the view shows both slots with traffic, the step and its health, Pause and
 * Resume move the rollout, Roll back ends it with its reason in the history; nothing leaks as
 * markup. Without /usr/bin/chromium the suite is skipped locally and fails under CI.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { browserSkip, signIn } from '../helpers/browser.ts';
import { openAdminUi, type AdminUi } from '../helpers/admin-ui.ts';
import { createTaggedRepo } from '../rollouts/helpers.ts';

describe('admin UI Rollouts view in Chromium', { skip: browserSkip }, () => {
  let ui: AdminUi;

  before(async () => {
    // A long step window: the rollout stays in its first step while the page is looked at.
    ui = await openAdminUi('rollouts-ui', {
      env: { QUIVER_DATABASE_URL: 'memory://', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_ROLLOUT_STEP_WINDOW_MS: '600000' },
      async prepare(app, home) {
        const remote = await createTaggedRepo(join(home, 'repo'), [
          { tag: 'v1.0.0', version: '1.0.0', tools: ['add', 'echo'] },
          { tag: 'v2.0.0', version: '2.0.0', tools: ['add', 'echo', 'product'] },
        ]);
        await app.plugins.add(remote, { name: 'calc', ref: 'v1.0.0' });
        await app.rollouts.upgrade('calc', { ref: 'v2.0.0' });
      },
    });
  });

  after(() => ui?.close());

  it('shows both slots with traffic and health, pauses, resumes and rolls back', async () => {
    const { page, server, app, consoleErrors } = ui;
    await signIn(page, server.url, server.adminKey!);
    await page.getByRole('tab', { name: 'Rollouts' }).click();
    const card = page.getByRole('region', { name: 'Rollout of calc' });
    await card.waitFor();
    assert.match(await card.innerText(), /step 1 of 3 \(10 %\), canary traffic 10 %/);
    const slots = card.locator('table', { has: page.locator('caption', { hasText: 'Slots' }) });
    assert.match(await slots.innerText(), /blue\s+1\.0\.0\S*\s+active\s+90 %/);
    assert.match(await slots.innerText(), /green\s+2\.0\.0\S*\s+canary\s+10 %/);
    await card.locator('table', { has: page.locator('caption', { hasText: 'This step' }) }).waitFor();

    await card.getByRole('button', { name: 'Pause' }).click();
    await card.getByRole('button', { name: 'Resume' }).waitFor();
    assert.equal((await app.rollouts.status('calc')).rollout?.status, 'paused');
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.getByRole('button', { name: 'Pause' }).waitFor();
    await card.getByRole('button', { name: 'Roll back' }).click();
    await card.getByText('Why: rolled back from the admin UI').waitFor();
    assert.match(await slots.innerText(), /green\s+2\.0\.0\S*\s+failed\s+0 %/);
    assert.match(await card.locator('table', { has: page.locator('caption', { hasText: 'History' }) }).innerText(), /rolled back \(manual\): rolled back from the admin UI/);
    assert.equal(await card.getByRole('button', { name: 'Promote' }).count(), 0, 'no actions on a finished rollout');
    assert.doesNotMatch(await page.locator('#view').innerText(), /\bundefined\b|\bNaN\b|\[object Object\]/);
    assert.deepEqual(consoleErrors, []);
  });
});
