/**
 * The admin UI's Documents view (issue #14) in a real browser: a real App served over HTTP
 * with a plugin that registered its tools through catalog sync, one description carrying
 * markup. In Debian's Chromium (playwright-core): the view says there is no generated document
 * yet, Generate produces one, and the page shows its sources, freshness, each field with the
 * source it came from, and the diff against the (absent) current document — as text, the
 * markup never run. Accept asks first (dismissed: nothing changes), then makes the generation
 * the current document, which the view names; Reject on a new generation marks it rejected.
 * Without /usr/bin/chromium the suite is skipped locally and fails under CI.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { browserSkip, signIn } from '../helpers/browser.ts';
import { openAdminUi, type AdminUi } from '../helpers/admin-ui.ts';

describe('admin UI Documents view in Chromium', { skip: browserSkip }, () => {
  let ui: AdminUi;

  before(async () => {
    ui = await openAdminUi('pid-ui', {
      env: { QUIVER_DATABASE_URL: 'memory://' },
      async prepare(app) {
        await app.catalog.syncPlugin({
          pluginId: 'kit',
          version: '1.0.0',
          tools: [
            { name: 'convert_currency', description: 'Convert money between currencies. <img src=x onerror="window.__xss=1">', parameters: { type: 'object', properties: { amount: { type: 'number' } } }, annotations: { readOnlyHint: true } },
            { name: 'book_flight', description: 'Book a flight for the traveller.', parameters: { type: 'object', properties: {} }, annotations: { readOnlyHint: false } },
          ],
        });
      },
    });
  });

  after(() => ui?.close());

  it('generates a document and shows its provenance and diff as text', async () => {
    const { page, server, consoleErrors } = ui;
    await signIn(page, server.url, server.adminKey!);
    await page.getByRole('tab', { name: 'Documents' }).click();
    await page.getByText('No generated document yet.').waitFor();
    await page.getByRole('button', { name: 'Generate' }).click();
    const provenance = page.locator('table', { has: page.locator('caption', { hasText: 'Provenance' }) });
    await provenance.waitFor();
    await provenance.getByRole('row', { name: /tools\.convert_currency\.description mcp/ }).waitFor();
    assert.match(await provenance.innerText(), /tools\.book_flight\.sideEffects\s+mcp/);
    assert.match(await page.locator('.pid-summary').innerText(), /up to date/);
    const diff = page.locator('table', { has: page.locator('caption', { hasText: /Diff/ }) });
    assert.match(await diff.innerText(), /added\s+tools\.convert_currency\.retrySafe\s+mcp/);
    // The description's markup is shown, never run.
    assert.match(await provenance.innerText(), /<img src=x onerror="window.__xss=1">/);
    assert.equal(await page.locator('#view img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.doesNotMatch(await page.locator('#view').innerText(), /\bundefined\b|\bNaN\b|\[object Object\]/);
    assert.deepEqual(consoleErrors, []);
  });

  it('accepts the generation after a confirmation and shows which generation is current; rejects a new one', async () => {
    const { page, app, consoleErrors } = ui;
    const current = page.locator('#pid-current');
    assert.equal(await current.innerText(), 'not accepted from a generation');
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Accept' }).click();
    assert.equal((await app.plugins.getIntelligence('kit').catch(() => undefined)), undefined, 'a dismissed confirmation writes nothing');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Accept' }).click();
    await page.locator('#pid-current', { hasText: /accepted by key:.*\(this one\)/ }).waitFor();
    const generationId = (await app.pidGeneration.get('kit')).id;
    assert.match(await page.locator('.pid-summary').innerText(), new RegExp(`${generationId} \\(accepted\\)`));
    assert.equal((await app.plugins.getIntelligence('kit')).origin, 'generated');
    assert.equal(await page.getByRole('button', { name: 'Reject' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Generate' }).click();
    await page.locator('.pid-summary', { hasText: '(candidate)' }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.locator('.pid-summary', { hasText: '(rejected)' }).waitFor();
    assert.match(await current.innerText(), /accepted by key:.*\(an earlier one\)/);
    assert.equal((await app.pidGeneration.get('kit')).review, 'rejected');
    assert.deepEqual(consoleErrors, []);
  });
});
