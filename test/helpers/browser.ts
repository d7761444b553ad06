/**
 * @module test/helpers/browser
 * The admin UI in Debian's Chromium through playwright-core, as the browser tests open it: the
 * binary (QUIVER_TEST_CHROMIUM or /usr/bin/chromium), the flags a closed network needs, the
 * skip rule (skipped locally without Chromium, a failure under CI), a page that collects console
 * errors, signing in with a key, and closing what a test opened.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.QUIVER_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Without the background-networking flags Chromium keeps dialling out on a closed network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `describe`'s skip option: false under CI (a missing browser then fails in `openBrowserPage`). */
export const browserSkip: string | false =
  existsSync(CHROMIUM) || process.env.CI === 'true' ? false : `${CHROMIUM} is not installed (apt-get install -y chromium); browser test skipped`;

/** A browser page and what it logged as errors. */
export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors, except those `ignore` matches. */
  consoleErrors: string[];
}

/** Opens Chromium with a profile under `folder`; console errors matching `ignore` are not collected. */
export async function openBrowserPage(folder: string, options: { ignore?: RegExp } = {}): Promise<BrowserPage> {
  assert.ok(existsSync(CHROMIUM), `CI=true but ${CHROMIUM} is missing: the provisioning must install chromium`);
  const context = await chromium.launchPersistentContext(join(folder, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1360, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !(options.ignore?.test(message.text()) ?? false)) consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`page error: ${error.message}`));
  return { context, page, consoleErrors };
}

/** Opens the admin UI at `baseUrl` and signs in with `key`. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/ui`);
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** What a browser test opened; any part is missing when its `before()` failed before opening it. */
export interface BrowserTestParts {
  context?: BrowserContext | undefined;
  /** The HTTP server the page talks to (or what stops a `quiver serve` child). */
  server?: { close(): Promise<unknown> } | undefined;
  app?: { close(): Promise<unknown> } | undefined;
  /** The test's temporary folder (the browser profile is in it), removed last. */
  folder?: string | undefined;
}

/** Closes the browser, then the server, then the app, then removes the folder: the order each `after()` needs. */
export async function closeBrowserTest(parts: BrowserTestParts): Promise<void> {
  await parts.context?.close();
  await parts.server?.close();
  await parts.app?.close();
  if (parts.folder) await rm(parts.folder, { recursive: true, force: true });
}
