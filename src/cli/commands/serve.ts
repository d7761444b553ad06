/**
 * @module cli/commands/serve
 * `quiver serve`: starts the HTTP API (and, later, the MCP endpoint) on the configured store.
 * Binds 127.0.0.1 unless told otherwise; binding every interface needs an explicit flag.
 * On first start it creates an admin API key and prints it once.
 */
import { serve as serveHttp } from '@hono/node-server';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { isPublicBindHost } from '../../config.ts';
import { describeStoreLocation } from '../../store/open.ts';
import { createApi } from '../../api/app.ts';
import type { CommandSpec } from '../command.ts';
import { parseHostPort } from './host-port.ts';

export const serveCommand: CommandSpec = {
  path: ['serve'],
  summary: 'Start Quiver: HTTP API (and MCP over Streamable HTTP at /mcp) on the embedded store or PostgreSQL.',
  usage: '[--http HOST:PORT] [--dangerously-bind-all-interfaces]',
  options: {
    http: { type: 'string' },
    'dangerously-bind-all-interfaces': { type: 'boolean', default: false },
  },
  async run(context) {
    const { host, port } = parseHostPort(context.args.values.http, context.config().http);
    if (isPublicBindHost(host) && context.args.values['dangerously-bind-all-interfaces'] !== true) {
      throw new QuiverError(
        ErrorCodes.invalidInput,
        `refusing to listen on ${host}: only loopback is allowed by default; pass --dangerously-bind-all-interfaces to expose Quiver`,
      );
    }
    const started = performance.now();
    const app = await context.openApp();
    const adminKey = await app.apiKeys.ensureAdminKey();
    const api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules(), logger: app.logger });
    const server = serveHttp({ fetch: api.fetch, hostname: host, port });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', () => resolve());
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new QuiverError(ErrorCodes.unavailable, `cannot listen on ${host}:${port}: ${error.code ?? error.message}`, { cause: error }),
        ),
      );
    });
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
    if (adminKey) {
      context.io.stderr(
        `\nCreated the first admin API key. It is shown only this once; store it now:\n\n  ${adminKey}\n\n` +
          `Use it as "Authorization: Bearer <key>".\n\n`,
      );
    }
    const readyMs = Math.round(performance.now() - started);
    if (context.json) {
      context.io.stdout(`${JSON.stringify({ url, store: describeStoreLocation(app.config.store), readyMs })}\n`);
    } else {
      context.io.stdout(`Quiver listening on ${url} (store: ${describeStoreLocation(app.config.store)}, ready in ${readyMs} ms)\n`);
    }
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return 0;
  },
};
