/**
 * @module cli/commands/serve
 * `quiver serve`: Quiver on the configured store, as
 * - HTTP (default): the REST API plus the MCP endpoint (Streamable HTTP at `/mcp`), bound to
 *   127.0.0.1 unless told otherwise (binding every interface needs an explicit flag);
 * - `--stdio`: one MCP session on stdin/stdout for a local client (Claude Desktop, Cursor,
 *   the MCP Inspector), bound to the workspace/org/user given by flags. Logs go to stderr.
 * On first start it creates an admin API key and prints it once (stderr).
 */
import { serve as serveHttp } from '@hono/node-server';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { isPublicBindHost } from '../../config.ts';
import { describeStoreLocation } from '../../store/open.ts';
import { createApi } from '../../api/app.ts';
import type { App } from '../../app.ts';
import { createGateway, type Gateway } from '../../gateway/gateway.ts';
import { createGatewayBackend } from '../../composition/gateway-backend.ts';
import { describeOptions, type CliContext, type CommandSpec } from '../command.ts';
import { controlSocketPath, startControlSocket, type ControlSocket } from '../control-socket.ts';
import { parseHostPort } from './host-port.ts';
import { MCP_STDIO_OPTIONS, identityFromFlags, mcpRoutes, parseExposureMode, runStdioGateway } from './serve-mcp.ts';
import { QUIVER_VERSION } from '../../core/version.ts';

/**
 * While this process owns the embedded data folder, other `quiver` commands run through it
 * (issue #15): a control socket beside the folder's lock runs them against this app.
 */
async function startCliForwarding(app: App, context: CliContext): Promise<ControlSocket | undefined> {
  if (app.config.store.kind !== 'folder') return undefined;
  // Imported here: the command list includes this very command.
  const [{ runCli }, { commands }] = await Promise.all([import('../run-cli.ts'), import('./index.ts')]);
  return startControlSocket({
    socketPath: controlSocketPath(app.config.store.path),
    logger: app.logger.child({ part: 'cli-forwarding' }),
    run: async ({ argv, cwd, stdin }) => {
      let stdout = '';
      let stderr = '';
      const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
      const exitCode = await runCli(argv, commands, io, context.env, { app, cwd, ...(stdin !== undefined ? { stdin } : {}) });
      return { exitCode, stdout, stderr };
    },
  });
}

function waitForSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function buildGateway(app: App, context: CliContext): Promise<{ gateway: Gateway; close(): Promise<void> }> {
  const backend = createGatewayBackend({
    db: app.db,
    selection: app.selection,
    plugins: app.plugins,
    supervisor: app.supervisor,
    logger: app.logger.child({ part: 'gateway' }),
  });
  const defaultExposureMode = parseExposureMode(context.args.values.exposure);
  await backend.refreshExposureModes();
  const gateway = createGateway({
    backend,
    logger: app.logger.child({ part: 'gateway' }),
    options: {
      serverInfo: { name: 'quiver', version: QUIVER_VERSION },
      ...(defaultExposureMode ? { defaultExposureMode } : {}),
      // A workspace's own setting (`quiver workspace set W --exposure M`) beats the server default.
      exposureModeFor: (identity) => backend.exposureModeFor(identity),
      // Issue #18: per-tenant and global session limits, short idle expiry, bounded searches.
      sessions: {
        maxSessions: app.config.mcp.maxSessions,
        maxSessionsPerKey: app.config.mcp.maxSessionsPerKey,
        maxSessionsPerOrg: app.config.mcp.maxSessionsPerOrg,
        idleTtlMs: app.config.mcp.sessionIdleTtlMs,
      },
      admission: { maxConcurrent: app.config.mcp.maxConcurrentSearches, maxQueued: app.config.mcp.maxQueuedSearches, maxWaitMs: app.config.mcp.maxWaitMs },
    },
  });
  return {
    gateway,
    async close() {
      await gateway.close();
      await backend.close();
    },
  };
}

async function serveStdio(context: CliContext): Promise<number> {
  const app = await context.openApp();
  const adminKey = await app.apiKeys.ensureAdminKey();
  if (adminKey) context.io.stderr(`Created the first admin API key (shown once): ${adminKey}\n`);
  const { gateway, close } = await buildGateway(app, context);
  const forwarding = await startCliForwarding(app, context);
  try {
    const running = await runStdioGateway({ gateway, identity: identityFromFlags(context.args.values) });
    await Promise.race([running.closed, waitForSignal()]);
    await running.close();
  } finally {
    await forwarding?.close();
    await close();
  }
  return 0;
}

export const serveCommand: CommandSpec = {
  path: ['serve'],
  defaultLogLevel: 'info',
  // A second server on a folder another one owns must fail (exit 4), not run inside the first.
  forwardable: false,
  summary: 'Start Quiver: REST API and MCP (Streamable HTTP at /mcp), or one MCP session over stdio with --stdio.',
  usage:
    '[--http HOST:PORT] [--dangerously-bind-all-interfaces] | --stdio [--workspace W] [--project P] [--org O] [--user U] [--role R]... [--tier T] [--exposure search|capabilities|all] [--allow-tool NAME]...',
  options: {
    http: { type: 'string', valueName: 'HOST:PORT', description: 'where the HTTP API and /mcp listen; env QUIVER_HOST, QUIVER_PORT', defaultHelp: '127.0.0.1:7411' },
    'dangerously-bind-all-interfaces': { type: 'boolean', default: false, description: 'allow --http on a non-loopback address (exposes Quiver to the network)' },
    ...describeOptions(MCP_STDIO_OPTIONS, {
      stdio: 'serve one MCP session on stdin/stdout instead of HTTP (logs go to stderr)',
      workspace: { valueName: 'W', description: '--stdio: the workspace whose plugins the session sees', defaultHelp: 'default' },
      project: { valueName: 'P', description: '--stdio: the project within the workspace' },
      org: { valueName: 'O', description: '--stdio: the organisation id, for policy rules' },
      user: { valueName: 'U', description: '--stdio: the user id, for policy rules and the bandit' },
      role: { valueName: 'R', description: '--stdio: a role of the user, for policy rules' },
      tier: { valueName: 'T', description: '--stdio: the plan tier, for policy rules' },
      exposure: { valueName: 'MODE', description: "--stdio: search, capabilities or all (how tools are offered)", defaultHelp: "the workspace's setting, else search" },
      'allow-tool': { valueName: 'NAME', description: '--stdio: expose only these qualified tool names' },
    }),
  },
  async run(context) {
    if (context.args.values.stdio === true) return serveStdio(context);
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
    const { gateway, close: closeGateway } = await buildGateway(app, context);
    const mcp = mcpRoutes({
      gateway,
      logger: app.logger.child({ part: 'mcp-http' }),
      // Session limits count against the API key and its organisation, whatever the request asks.
      ownerOf: (principal) => ({ key: principal.keyId, org: principal.orgId }),
      // DNS-rebinding protection: only these Host names reach /mcp.
      allowedHosts: isPublicBindHost(host) ? ['127.0.0.1', 'localhost', '::1', host] : ['127.0.0.1', 'localhost', '::1'],
    });
    const api = createApi({ apiKeys: app.apiKeys, modules: [...app.apiModules(), mcp], logger: app.logger });
    const server = serveHttp({ fetch: api.fetch, hostname: host, port });
    let forwarding: ControlSocket | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('listening', () => resolve());
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(new QuiverError(ErrorCodes.unavailable, `cannot listen on ${host}:${port}: ${error.code ?? error.message}`, { cause: error })),
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
      forwarding = await startCliForwarding(app, context);
      const readyMs = Math.round(performance.now() - started);
      const store = describeStoreLocation(app.config.store);
      if (context.json) context.io.stdout(`${JSON.stringify({ url, mcp: `${url}/mcp`, store, readyMs })}\n`);
      else context.io.stdout(`Quiver listening on ${url} (MCP at ${url}/mcp; store: ${store}; ready in ${readyMs} ms)\n`);
      await waitForSignal();
    } finally {
      await forwarding?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mcp.handler.close();
      await closeGateway();
    }
    return 0;
  },
};
