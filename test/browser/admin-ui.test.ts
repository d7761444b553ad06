/**
 * The admin UI (DESIGN §3.9) in a real browser: a real `quiver serve` on a PGlite folder whose
 * catalog was filled through `quiver sync`, driven with playwright-core in Debian's Chromium.
 * Without /usr/bin/chromium the suite is skipped locally and fails under CI (CI installs it).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { ChildProcess } from 'node:child_process';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { browserSkip, CHROMIUM, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';

/** A small plugin catalog: three tools, a category and a page mapping. */
function payload(version: string, forecastDescription: string) {
  return {
    pluginId: 'weather',
    version,
    categories: [{ name: 'forecast', description: 'Weather forecasts' }],
    pageMappings: [{ pagePattern: 'weather*', category: 'forecast', priority: 5 }],
    tools: [
      {
        name: 'get_forecast',
        description: forecastDescription,
        category: 'forecast',
        parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
        exampleQueries: ['weather in Paris tomorrow'],
      },
      {
        name: 'get_alerts',
        description: 'List active severe weather alerts for a region',
        category: 'forecast',
        parameters: { type: 'object', properties: { region: { type: 'string' } } },
      },
      { name: 'air_quality', description: 'Current air quality index for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      // Text that would run as markup if the UI ever inserted data as HTML.
      { name: 'html_probe', description: '<img src=x onerror="window.__xss=1"><b>not bold</b>', parameters: { type: 'object', properties: {} } },
    ],
  };
}

describe('admin UI in Chromium', { skip: browserSkip }, () => {
  let root: string;
  let server: { child: ChildProcess; url: string; stderr: () => string } | undefined;
  let key: string;
  let context: BrowserContext | undefined;
  let page: Page;
  let consoleErrors: string[] = [];

  /** Rendering slips (a null or an object printed as text) never reach the page. */
  async function assertNoStrayText() {
    assert.doesNotMatch(await page.locator('#view').innerText(), /\bnull\b|\bundefined\b|\bNaN\b|\[object Object\]/);
  }

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `CI=true but ${CHROMIUM} is missing: the provisioning must install chromium`);
    root = mkdtempSync(join(tmpdir(), 'quiver-ui-browser-'));
    const data = join(root, 'data');
    const env = { QUIVER_HOME: join(root, 'home') };
    // Two syncs, so get_forecast has a version history with a changed description.
    for (const [index, body] of [payload('1.0.0', 'Get the weather forecast for a city'), payload('1.1.0', 'Get the weather forecast for a city, hourly and daily')].entries()) {
      const file = join(root, `payload-${index}.json`);
      writeFileSync(file, JSON.stringify(body));
      const synced = await runBinary(['sync', file, '--data', data, '--json'], env);
      assert.equal(synced.code, 0, synced.stderr);
    }
    server = await startServe(['--data', data, '--http', '127.0.0.1:0'], env);
    key = /qvr_[A-Za-z0-9_-]+/.exec(server.stderr())?.[0] ?? '';
    assert.ok(key, 'the first start prints the admin key');

    // One logged selection with an outcome, so Analytics has a KPI and an accuracy point.
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const selected = await fetch(`${server.url}/v1/select`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: 'weather in Paris tomorrow', k: 3, context: { page: 'weather/today' } }),
    });
    assert.equal(selected.status, 200);
    const { metadata } = (await selected.json()) as { metadata: { eventId: string } };
    const outcome = await fetch(`${server.url}/v1/outcomes`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ eventId: metadata.eventId, toolsCalled: ['weather__get_forecast'], success: true }),
    });
    assert.equal(outcome.status, 200);

    ({ context, page, consoleErrors } = await openBrowserPage(root));
  });

  after(() => closeBrowserTest({ context, server: server && { close: () => stopChild(server!.child) }, folder: root }));

  it('signs in, lists the synced tools and shows a tool with its version history', async () => {
    await page.goto(`${server!.url}/ui`);
    await page.getByLabel('API key', { exact: true }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'weather__get_forecast' }).waitFor();
    const names = await page.locator('.tool-list tbody tr td:first-child').allTextContents();
    assert.deepEqual([...names].sort(), ['weather__air_quality', 'weather__get_alerts', 'weather__get_forecast', 'weather__html_probe']);
    assert.match(await page.locator('.tool-list caption').textContent() ?? '', /4 tools/);

    // The key lives in this tab's session storage only.
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('quiver.apiKey'),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    assert.deepEqual(stored, { session: key, local: 0, cookie: '' });

    // Filter by status, then open the tool.
    await page.getByLabel('Status').selectOption('retired');
    await page.getByText('No tools match these filters.').waitFor();
    await page.getByLabel('Status').selectOption('active');
    await page.getByRole('button', { name: 'weather__get_forecast' }).click();
    const detail = page.locator('.tool-detail article');
    await detail.getByRole('heading', { name: 'weather__get_forecast' }).waitFor();
    await detail.getByText('Get the weather forecast for a city, hourly and daily').waitFor();
    const history = detail.locator('table tbody tr');
    assert.equal(await history.count(), 2);
    assert.match((await history.nth(0).textContent()) ?? '', /v2.*description/);
    assert.match((await history.nth(1).textContent()) ?? '', /v1.*created/);
    assert.match((await detail.locator('pre.json').textContent()) ?? '', /"city"/);
    // Roll back to v1 (confirmed in the dialog): a new version v3 restores the old description.
    page.once('dialog', (dialog) => void dialog.accept());
    await detail.getByLabel('Roll back to').selectOption('1');
    await detail.getByRole('button', { name: 'Roll back' }).click();
    await detail.getByText('Get the weather forecast for a city', { exact: true }).waitFor();
    assert.equal(await history.count(), 3);
    assert.match((await history.nth(0).textContent()) ?? '', /v3.*description/);
    await assertNoStrayText();

    // Text that looks like HTML stays text.
    await page.getByRole('button', { name: 'weather__html_probe' }).click();
    await detail.getByText('<img src=x onerror="window.__xss=1"><b>not bold</b>').waitFor();
    assert.equal(await detail.locator('img, b').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    await page.screenshot({ path: join(tmpdir(), 'quiver-admin-ui-catalog.png'), fullPage: true });
  });

  it('runs a playground selection and shows the selected tools and tokens saved', async () => {
    await page.getByRole('tab', { name: 'Playground' }).click();
    await page.getByLabel('Query').fill('what is the weather in Paris tomorrow');
    await page.getByLabel('k', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Select tools' }).click();
    const result = page.locator('.playground-result');
    await result.getByRole('row', { name: /weather__get_forecast/ }).waitFor();
    assert.equal(await result.locator('table tbody tr').count(), 2);
    const saved = result.locator('[data-kpi="tokens-saved"]');
    assert.match((await saved.textContent()) ?? '', /Tokens saved/);
    assert.match((await saved.locator('.kpi-value').textContent()) ?? '', /^\d[\d,]* \([\d.]+ %\)$/);
    assert.ok(Number(((await saved.locator('.kpi-value').textContent()) ?? '').split(' ')[0]!.replace(/,/g, '')) > 0, 'k=2 of 4 tools saves tokens');
    assert.equal(await result.locator('svg.chart rect.bar').count(), 7, 'one bar per pipeline stage');
    await assertNoStrayText();
    await page.screenshot({ path: join(tmpdir(), 'quiver-admin-ui-playground.png'), fullPage: true });
  });

  it('shows analytics: the selection KPI, charts drawn in SVG, the heatmap and drift', async () => {
    await page.getByRole('tab', { name: 'Analytics' }).click();
    const selections = page.locator('[data-kpi="selections"] .kpi-value');
    await selections.waitFor();
    assert.equal(await selections.textContent(), '1');
    // Accuracy over time (src/web/accuracy.js): one point per measure on the one day with an outcome.
    const accuracy = page.locator('svg[aria-label="Daily accuracy: hit rate, top-1 rate and MRR"]');
    for (const series of ['series-hit', 'series-top1', 'series-mrr']) assert.equal(await accuracy.locator(`g.${series} circle.dot`).count(), 1, series);
    assert.equal(await accuracy.locator('text', { hasText: 'Top-1 rate' }).count(), 1, 'the legend names the series');
    assert.ok((await page.locator('svg[aria-label="Selections by method"] rect.bar').count()) >= 1);
    await page.getByRole('cell', { name: 'weather/today' }).or(page.getByRole('columnheader', { name: 'weather/today' })).first().waitFor();
    await page.getByRole('row', { name: /weather__get_forecast/ }).first().waitFor();
    await assertNoStrayText();
    await page.screenshot({ path: join(tmpdir(), 'quiver-admin-ui-analytics.png'), fullPage: true });
  });

  it('moves between tabs with the keyboard', async () => {
    const analytics = page.getByRole('tab', { name: 'Analytics' });
    await analytics.focus();
    await page.keyboard.press('Home');
    assert.equal(await page.getByRole('tab', { name: 'Catalog' }).getAttribute('aria-selected'), 'true');
    await page.getByRole('button', { name: 'weather__get_forecast' }).waitFor();
    // From the first tab, ArrowLeft wraps to the last (Users), then steps back through Rollouts, Documents and Trust to Analytics.
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('tab', { name: 'Users' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('tab', { name: 'Rollouts' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('tab', { name: 'Documents' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('tab', { name: 'Trust' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await analytics.getAttribute('aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Analytics');
    assert.equal(new URL(page.url()).hash, '#analytics');
  });

  it('lists the plugin and the rules and page mappings', async () => {
    await page.getByRole('tab', { name: 'Plugins' }).click();
    const row = page.getByRole('row', { name: /weather/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /1\.1\.0.*sync.*active.*4/);
    // A failing install shows the API's error code, the failing step and the reason.
    mkdirSync(join(root, 'not-a-plugin'));
    writeFileSync(join(root, 'not-a-plugin', 'README.md'), 'no server here');
    await page.getByLabel('Source').fill(join(root, 'not-a-plugin'));
    await page.getByRole('button', { name: 'Install' }).click();
    const failure = page.locator('form .error');
    await failure.waitFor();
    const shown = await failure.innerText();
    assert.match(shown, /^install_failed cannot install plugin 'not-a-plugin': launch failed/);
    assert.match(shown, /Failed step: launch/);
    await assertNoStrayText();
    await page.screenshot({ path: join(tmpdir(), 'quiver-admin-ui-plugins.png'), fullPage: true });
    await page.getByRole('tab', { name: 'Rules' }).click();
    await page.getByText('No visibility rules').waitFor();
    await page.getByRole('cell', { name: 'weather*' }).waitFor();
    // A rule with broken conditions shows the API's error, then a valid one is listed.
    await page.getByLabel('Conditions (JSON)').fill('{"orgIds": []}');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.locator('.error').getByText('invalid_input').waitFor();
    await page.getByLabel('Conditions (JSON)').fill('{"orgIds": ["acme"]}');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: '{"orgIds":["acme"]}' }).waitFor();
    await assertNoStrayText();
    await page.screenshot({ path: join(tmpdir(), 'quiver-admin-ui-rules.png'), fullPage: true });
    // The 400 above is the only failed request the console may mention.
    const unexpected = consoleErrors.filter((text) => !/status of (400|422)/.test(text));
    assert.deepEqual(unexpected, []);
    consoleErrors.length = 0;
  });

  it('fits a 400 px wide screen: no view scrolls the page sideways; wide tables scroll inside their box', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      const pageWidth = () => page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
      const views: Array<[string, () => Promise<void>]> = [
        ['catalog', async () => {
          await page.getByRole('tab', { name: 'Catalog' }).click();
          await page.getByRole('button', { name: 'weather__get_forecast' }).click();
          await page.locator('.tool-detail article table tbody tr').first().waitFor();
        }],
        ['plugins', async () => {
          await page.getByRole('tab', { name: 'Plugins' }).click();
          await page.getByRole('row', { name: /weather/ }).waitFor();
        }],
        ['rules', async () => {
          await page.getByRole('tab', { name: 'Rules' }).click();
          await page.getByRole('cell', { name: 'weather*' }).waitFor();
        }],
        ['playground', async () => {
          await page.getByRole('tab', { name: 'Playground' }).click();
          await page.getByLabel('Query').fill('what is the weather in Paris tomorrow');
          await page.getByRole('button', { name: 'Select tools' }).click();
          // (The rule created above may hide the tools from this key: any result will do.)
          await page.locator('.playground-result [data-kpi="tokens-saved"]').waitFor();
          await page.locator('.playground-result svg.chart').waitFor();
        }],
        ['analytics', async () => {
          await page.getByRole('tab', { name: 'Analytics' }).click();
          await page.locator('[data-kpi="selections"] .kpi-value').waitFor();
          await page.locator('svg[aria-label="Daily accuracy: hit rate, top-1 rate and MRR"]').waitFor();
        }],
      ];
      for (const [name, open] of views) {
        await open();
        const { scrollWidth, clientWidth } = await pageWidth();
        await page.screenshot({ path: join(tmpdir(), `quiver-admin-ui-400-${name}.png`), fullPage: true });
        assert.ok(clientWidth <= 400, `${name}: viewport ${clientWidth}`);
        assert.ok(scrollWidth <= clientWidth, `${name}: the page is ${scrollWidth} px wide in a ${clientWidth} px viewport`);
      }
      // The version history table is wider than a phone: it scrolls inside its own box.
      await page.getByRole('tab', { name: 'Catalog' }).click();
      await page.getByRole('button', { name: 'weather__get_forecast' }).click();
      const history = page.locator('.tool-detail article table').filter({ has: page.getByRole('columnheader', { name: 'Changed fields' }) });
      await history.waitFor();
      // Read from the table on the page when read: the detail may render again as its data
      // arrives, and a replaced (detached) table computes no style at all ('' in a CI run).
      const box = await (
        await page.waitForFunction(() => {
          const table = Array.from(document.querySelectorAll('.tool-detail article table')).find((candidate) =>
            Array.from(candidate.querySelectorAll('th')).some((header) => header.textContent?.trim() === 'Changed fields'),
          );
          const container = table?.parentElement;
          if (!table || !container || !table.isConnected) return undefined;
          const rect = container.getBoundingClientRect();
          return { right: rect.right, overflowX: getComputedStyle(container).overflowX, tableWidth: table.scrollWidth, boxWidth: container.clientWidth };
        })
      ).jsonValue();
      assert.ok(box, 'the history table is on the page');
      assert.equal(box.overflowX, 'auto');
      assert.ok(box.right <= 400, `the history box ends at ${box.right} px`);
      assert.ok(box.tableWidth >= box.boxWidth);
      await assertNoStrayText();
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  it('forgets the key and logs no console errors', async () => {
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('API key', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('quiver.apiKey')), null);
    assert.equal(await page.locator('#app').isHidden(), true);
    // A reload does not sign back in.
    await page.reload();
    await page.getByLabel('API key', { exact: true }).waitFor();
    assert.equal(await page.locator('#app').isHidden(), true);
    assert.deepEqual(consoleErrors, []);
    // A wrong key is refused with the API's error, and is not kept.
    await page.getByLabel('API key', { exact: true }).fill('qvr_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#login-error .error').getByText('unauthorized').waitFor();
    assert.equal(await page.locator('#app').isHidden(), true);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('quiver.apiKey')), null);
    assert.deepEqual(consoleErrors.filter((text) => !/status of 401/.test(text)), []);
  });
});
