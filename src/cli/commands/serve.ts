/**
 * @module cli/commands/serve
 * `quiver serve`: Quiver on the configured store, as
 * - HTTP (default): the REST API plus the MCP endpoint (Streamable HTTP at `/mcp`), bound to
 *   127.0.0.1 unless told otherwise (binding every interface needs an explicit flag);
 * - `--stdio`: one MCP session on stdin/stdout for a local client (Claude Desktop, Cursor,
 *   the MCP Inspector), bound to the workspace/org/user given by flags. Logs go to stderr.
 * On first start it creates an admin API key and prints it once (stderr). The servers are wired
 * in the composition root (composition/server.ts); this command parses flags and prints.
 *
 * Issue #26: `--stdio` beside a Quiver that owns the data folder bridges to it
 * (`stdio-bridge.ts`) instead of failing on the lock; and a server stops when the process that
 * launched it goes away (`parent-watch.ts`), unless told `--outlive-parent`.
 */
import type { App } from '../../app.ts';
import { MCP_STDIO_OPTIONS, assertBindAllowed, identityFromFlags, parseExposureMode } from '../../composition/server-flags.ts';
import type { ForwardedRunner } from '../../store/control-socket.ts';
import type { StdioBridgeFlags } from '../../store/control-socket.ts';
import { describeOptions, EXIT_CODES, type CliContext, type CommandSpec } from '../command.ts';
import { watchParent } from '../parent-watch.ts';
import { parseHostPort } from './host-port.ts';
import { ErrorCodes, isQuiverError, QuiverError } from '../../core/errors.ts';

/**
 * The servers, loaded when this command serves (issue #28): the command list, and with it
 * `quiver --help` and every forwarded command, must not load the gateway and the API.
 */
const loadServers = () => import('../../composition/server.ts');

/** `promise`, marked handled: awaited later, after an app that fails to open has reported its own error. */
function quietly<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Runs a command another `quiver` forwards to this server: the CLI itself, against this app (issue #15). */
function forwardedRunner(app: App, context: CliContext): ForwardedRunner {
  const commands = context.commands;
  if (commands === undefined) throw new QuiverError(ErrorCodes.internal, 'quiver serve runs through runCli, which hands it the command list');
  return async ({ argv, cwd, stdin }) => {
    const { runCli } = await import('../run-cli.ts');
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
    const exitCode = await runCli(argv, [...commands], io, context.env, { app, cwd, ...(stdin !== undefined ? { stdin } : {}) });
    return { exitCode, stdout, stderr };
  };
}

/** Resolves on SIGINT, SIGTERM or, unless `--outlive-parent`, when the launching process is gone. */
function waitForStop(context: CliContext): Promise<void> {
  return new Promise<void>((resolve) => {
    const stopWatching = context.args.values['outlive-parent'] === true ? () => {} : watchParent(() => stop());
    const stop = () => {
      stopWatching();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** The session flags a bridged `--stdio` passes to the Quiver it bridges to, as given. */
function bridgeFlags(values: CliContext['args']['values']): StdioBridgeFlags {
  const text = (name: string) => (typeof values[name] === 'string' ? { [name]: values[name] } : {});
  const list = (name: string) => (Array.isArray(values[name]) && values[name].length > 0 ? { [name]: values[name].map(String) } : {});
  return { ...text('workspace'), ...text('project'), ...text('org'), ...text('user'), ...list('role'), ...text('tier'), ...text('exposure'), ...list('allow-tool') };
}

/** How long `--stdio` waits for the control socket of a Quiver that holds the folder but is still starting, ms. */
const STARTING_SERVER_WAIT_MS = 60_000;

/**
 * `--stdio` beside a running Quiver (issue #26): bridge to it and return the exit code, or
 * undefined when no Quiver owns the folder (serve here). `waitMs` > 0 keeps trying that long.
 */
async function tryBridge(context: CliContext, waitMs: number): Promise<number | undefined> {
  const store = context.config().store;
  if (store.kind !== 'folder') return undefined;
  // Loaded when it runs (issue #28: the command list stays light).
  const [{ controlSocketPath }, { bridgeStdio }] = await Promise.all([import('../../store/control-socket.ts'), import('../stdio-bridge.ts')]);
  const socketPath = controlSocketPath(store.path);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const bridge = await bridgeStdio(socketPath, bridgeFlags(context.args.values), process.stdin, process.stdout);
    if (bridge) {
      void waitForStop(context).then(() => bridge.close());
      const ended = await bridge.finished;
      if (ended === 'client') return EXIT_CODES.ok;
      context.io.stderr('quiver: the Quiver serving this data folder stopped; the session is over\n');
      return EXIT_CODES.unavailable;
    }
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function runStdio(context: CliContext): Promise<number> {
  const bridged = await tryBridge(context, 0);
  if (bridged !== undefined) return bridged;
  let app;
  let servers: ReturnType<typeof loadServers> | undefined;
  try {
    app = await context.openApp({ whileOpening: () => void (servers = quietly(loadServers())) });
  } catch (error) {
    // Another Quiver took the folder between our look and our open, and is still starting: bridge once its socket listens.
    if (!isQuiverError(error) || error.code !== ErrorCodes.dataDirLocked) throw error;
    const late = await tryBridge(context, STARTING_SERVER_WAIT_MS);
    if (late === undefined) throw error;
    return late;
  }
  const defaultExposureMode = parseExposureMode(context.args.values.exposure);
  const { serveStdio } = await (servers ?? loadServers());
  const server = await serveStdio(app, {
    identity: identityFromFlags(context.args.values),
    ...(defaultExposureMode ? { defaultExposureMode } : {}),
    forward: forwardedRunner(app, context),
  });
  if (server.adminKey) context.io.stderr(`Created the first admin API key (shown once): ${server.adminKey}\n`);
  try {
    await Promise.race([server.closed, waitForStop(context)]);
  } finally {
    await server.close();
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
    '[--http HOST:PORT] [--dangerously-bind-all-interfaces] [--outlive-parent] | --stdio [--workspace W] [--project P] [--org O] [--user U] [--role R]... [--tier T] [--exposure search|still|capabilities|all] [--allow-tool NAME]...',
  options: {
    http: { type: 'string', valueName: 'HOST:PORT', description: 'where the HTTP API and /mcp listen; env QUIVER_HOST, QUIVER_PORT', defaultHelp: '127.0.0.1:7411' },
    'dangerously-bind-all-interfaces': { type: 'boolean', default: false, description: 'allow --http on a non-loopback address (exposes Quiver to the network)' },
    'outlive-parent': { type: 'boolean', default: false, description: 'keep serving when the process that started Quiver (npx, a shell, a client) goes away; by default Quiver stops with it' },
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
    if (context.args.values.stdio === true) return runStdio(context);
    const { host, port } = parseHostPort(context.args.values.http, context.config().http);
    const allowPublicBind = context.args.values['dangerously-bind-all-interfaces'] === true;
    // Checked before the app opens: a refused address must not take the data folder's lock.
    assertBindAllowed(host, allowPublicBind);
    const started = performance.now();
    // The servers' modules load while the store starts in its own thread (issue #28).
    let servers: ReturnType<typeof loadServers> | undefined;
    const app = await context.openApp({ whileOpening: () => void (servers = quietly(loadServers())) });
    const defaultExposureMode = parseExposureMode(context.args.values.exposure);
    const { serveHttp } = await (servers ?? loadServers());
    const server = await serveHttp(app, {
      host,
      port,
      allowPublicBind,
      ...(defaultExposureMode ? { defaultExposureMode } : {}),
      forward: forwardedRunner(app, context),
    });
    try {
      if (server.adminKey) {
        context.io.stderr(
          `\nCreated the first admin API key. It is shown only this once; store it now:\n\n  ${server.adminKey}\n\n` +
            `Use it as "Authorization: Bearer <key>".\n\n`,
        );
      }
      const readyMs = Math.round(performance.now() - started);
      const store = (await import('../../store/open.ts')).describeStoreLocation(app.config.store);
      const { url } = server;
      if (context.json) context.io.stdout(`${JSON.stringify({ url, mcp: `${url}/mcp`, store, readyMs })}\n`);
      else context.io.stdout(`Quiver listening on ${url} (MCP at ${url}/mcp; store: ${store}; ready in ${readyMs} ms)\n`);
      await waitForStop(context);
    } finally {
      await server.close();
    }
    return 0;
  },
};
