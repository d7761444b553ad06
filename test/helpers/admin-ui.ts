/**
 * @module test/helpers/admin-ui
 * The admin UI of a fresh app in Chromium, as the view tests (users, documents, rollouts, trust)
 * open it: a temporary home, the app on it (`prepare` fills it before anything is served), its
 * HTTP server on loopback and a page collecting console errors; `close()` undoes it in order.
 */
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import type { Database } from '../../src/store/database.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { closeBrowserTest, openBrowserPage, type BrowserPage } from './browser.ts';

/** What `openAdminUi` opened. */
export interface AdminUi extends BrowserPage {
  home: string;
  app: App;
  server: HttpServer;
  /** Closes the browser, the server and the app, then removes the home. */
  close(): Promise<void>;
}

/**
 * Opens the admin UI of an app in a new home named after `name`: configured by `env` (silent
 * logs), on `db` when given; console errors matching `ignore` are not collected.
 */
export async function openAdminUi(
  name: string,
  options: { env?: Record<string, string>; db?: Database; ignore?: RegExp; prepare?: (app: App, home: string) => Promise<void> } = {},
): Promise<AdminUi> {
  const home = await openTempDir(name);
  let app: App | undefined;
  let server: HttpServer | undefined;
  try {
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', ...options.env }), options.db ? { db: options.db } : {});
    await options.prepare?.(app, home);
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    const browser = await openBrowserPage(home, options.ignore ? { ignore: options.ignore } : {});
    const opened = { home, app, server, ...browser };
    return { ...opened, close: () => closeBrowserTest({ context: opened.context, server: opened.server, app: opened.app, folder: home }) };
  } catch (error) {
    // What was opened before the failure is closed here: the test's after() has nothing to close.
    await closeBrowserTest({ server, app, folder: home });
    throw error;
  }
}
