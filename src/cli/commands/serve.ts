/**
 * @module cli/commands/serve
 * `quiver serve`: Quiver on the configured store, as
 * - HTTP (default): the REST API plus the MCP endpoint (Streamable HTTP at `/mcp`), bound to
 *   127.0.0.1 unless told otherwise (binding every interface needs an explicit flag);
 * - `--stdio`: one MCP session on stdin/stdout for a local client (Claude Desktop, Cursor,
 *   the MCP Inspector), bound to the workspace/org/user given by flags. Logs go to stderr.
 * On first start it creates an admin API key and prints it once (stderr). The servers are wired
 * in the composition root (composition/server.ts); this command parses flags and prints.
 */
import { describeStoreLocation } from '../../store/open.ts';
import type { App } from '../../app.ts';
import { MCP_STDIO_OPTIONS, assertBindAllowed, identityFromFlags, parseExposureMode, serveHttp, serveStdio } from '../../composition/server.ts';
import type { ForwardedRunner } from '../control-socket.ts';
import { describeOptions, type CliContext, type CommandSpec } from '../command.ts';
import { parseHostPort } from './host-port.ts';

/** Runs a command another `quiver` forwards to this server: the CLI itself, against this app (issue #15). */
function forwardedRunner(app: App, context: CliContext): ForwardedRunner {
  return async ({ argv, cwd, stdin }) => {
    // Imported here: the command list includes this very command.
    const [{ runCli }, { commands }] = await Promise.all([import('../run-cli.ts'), import('./index.ts')]);
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
    const exitCode = await runCli(argv, commands, io, context.env, { app, cwd, ...(stdin !== undefined ? { stdin } : {}) });
    return { exitCode, stdout, stderr };
  };
}

function waitForSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function runStdio(context: CliContext): Promise<number> {
  const app = await context.openApp();
  const defaultExposureMode = parseExposureMode(context.args.values.exposure);
  const server = await serveStdio(app, {
    identity: identityFromFlags(context.args.values),
    ...(defaultExposureMode ? { defaultExposureMode } : {}),
    forward: forwardedRunner(app, context),
  });
  if (server.adminKey) context.io.stderr(`Created the first admin API key (shown once): ${server.adminKey}\n`);
  try {
    await Promise.race([server.closed, waitForSignal()]);
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
    if (context.args.values.stdio === true) return runStdio(context);
    const { host, port } = parseHostPort(context.args.values.http, context.config().http);
    const allowPublicBind = context.args.values['dangerously-bind-all-interfaces'] === true;
    // Checked before the app opens: a refused address must not take the data folder's lock.
    assertBindAllowed(host, allowPublicBind);
    const started = performance.now();
    const app = await context.openApp();
    const defaultExposureMode = parseExposureMode(context.args.values.exposure);
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
      const store = describeStoreLocation(app.config.store);
      const { url } = server;
      if (context.json) context.io.stdout(`${JSON.stringify({ url, mcp: `${url}/mcp`, store, readyMs })}\n`);
      else context.io.stdout(`Quiver listening on ${url} (MCP at ${url}/mcp; store: ${store}; ready in ${readyMs} ms)\n`);
      await waitForSignal();
    } finally {
      await server.close();
    }
    return 0;
  },
};
