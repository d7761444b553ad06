/**
 * @module composition/server
 * The composition root's servers: everything `quiver serve` runs, wired from an `App` in one
 * place — the gateway backend and gateway (session limits and search admission from the
 * configuration), the API with every part's routes plus `/mcp`, and the CLI forwarding control
 * socket. `serveHttp` and `serveStdio` are what the CLI's serve command, the tests and the
 * benches start; the command itself only parses flags and prints.
 */
import type { Server as HttpServerType } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { serve } from '@hono/node-server';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { QUIVER_VERSION } from '../core/version.ts';
import { isPublicBindHost } from '../config.ts';
import type { App } from './app-type.ts';
import { createApi } from '../api/app.ts';
import { createBuiltInAuthorizationServer } from './authorization-server.ts';
import type { ExposureMode, SessionIdentity } from '../gateway/backend.ts';
import { createGateway, type Gateway } from '../gateway/gateway.ts';
import { TurnGate } from '../gateway/turn-gate.ts';
import type { RunStdioGatewayOptions, StdioGateway } from '../gateway/stdio.ts';
import { identityFromFlags } from '../gateway/identity.ts';
import { controlSocketPath, startControlSocket, type ControlSocket, type ForwardedRunner, type StdioSessionOpener } from '../store/control-socket.ts';
import { createGatewayBackend } from './gateway-backend.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { createResourceServer } from './resource-server.ts';
import { createHttpGuard } from './http-limits.ts';
import { pacedServerFactory } from './front-pacing.ts';
import { META_TOOL_NAMES, SEARCH_TOOLS } from '../gateway/meta-tools.ts';
import { createAppSessionStore, registerSessionJobs } from './stored-sessions.ts';
import { loadSecretKey } from '../plugins/secret-box.ts';
import { requestStateKey } from '../gateway/mrtr/request-state.ts';
import { assertBindAllowed } from './server-flags.ts';
import { createReplicaRegistry } from './replica-registry.ts';

// The session flags of `quiver serve --stdio`, for the CLI that parses them.
export { MCP_STDIO_OPTIONS, identityFromFlags, parseExposureMode, assertBindAllowed } from './server-flags.ts';

/**
 * A stdio connection's gateway front, loaded with the first one (issue #28: it imports the SDK v2
 * server, which an HTTP server with no MCP client yet does not load).
 */
async function runStdioGateway(options: RunStdioGatewayOptions): Promise<StdioGateway> {
  return (await import('../gateway/stdio.ts')).runStdioGateway(options);
}

/** A gateway over the app's services, and how to stop it. */
export interface AppGateway {
  gateway: Gateway;
  close(): Promise<void>;
}

/** The MCP gateway of an app: its backend, exposure modes and the configured session limits. */
export async function createAppGateway(app: App, options: { defaultExposureMode?: ExposureMode; storedSessions?: boolean; replicaId?: string } = {}): Promise<AppGateway> {
  const logger = app.logger.child({ part: 'gateway' });
  const backend = createGatewayBackend({ db: app.db, selection: app.selection, plugins: app.plugins, supervisor: app.supervisor, pinning: app.pinning, slots: app.rollouts, remoteOAuth: app.remoteOAuth, logger });
  await backend.refreshExposureModes();
  // Issue #16: the backend's launch-spec and plugin-list caches beside the selection caches in /metrics.
  const unwatch = app.telemetry.watch({ caches: () => backend.cacheStats() });
  const gateway = createGateway({
    backend,
    logger,
    storedSessions: options.storedSessions === true,
    // Issue #24: input_required request states are sealed with a key derived from the hub's secret
    // key, so a retry that reaches another replica is still checked (and none can be forged).
    requestStateKey: requestStateKey(loadSecretKey({ configured: app.config.secretKey, homeDir: app.config.homeDir }).key),
    // ... and name this replica in them, so a retry reaching another replica is forwarded here.
    ...(options.replicaId ? { replicaId: options.replicaId } : {}),
    options: {
      serverInfo: { name: 'quiver', version: QUIVER_VERSION },
      ...(options.defaultExposureMode ? { defaultExposureMode: options.defaultExposureMode } : {}),
      // A workspace's own setting (`quiver workspace set W --exposure M`) beats the server default.
      exposureModeFor: (identity) => backend.exposureModeFor(identity),
      // Issue #12: `quiver workspace set W --native-names on` shows plugins' own names where unambiguous.
      nativeNamesFor: (identity) => backend.nativeNamesFor(identity),
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
      unwatch();
      await gateway.close();
      await backend.close();
    },
  };
}

/**
 * While this process owns the embedded data folder, other `quiver` commands run through it
 * (issue #15): a control socket beside the folder's lock hands them to `forward`, and bridged
 * `quiver serve --stdio` processes to `doors` (issue #26).
 */
async function startCliForwarding(app: App, forward: ForwardedRunner | undefined, doors: StdioFrontDoors): Promise<ControlSocket | undefined> {
  if (forward === undefined || app.config.store.kind !== 'folder') return undefined;
  return startControlSocket({ socketPath: controlSocketPath(app.config.store.path), logger: app.logger.child({ part: 'cli-forwarding' }), run: forward, openStdio: doors.open });
}

/** The stdio sessions other processes bridge into this one (issue #26). */
interface StdioFrontDoors {
  open: StdioSessionOpener;
  /** Resolves once no bridged session is running (at once when none is). */
  drained(): Promise<void>;
  /** Refuses new sessions and closes the running ones. */
  close(): Promise<void>;
}

/**
 * Bridged stdio sessions: each a session of `gatewayOf()` for the identity its flags name, the
 * same as `quiver serve --stdio` with those flags would open on the folder itself.
 */
function createStdioFrontDoors(app: App, gatewayOf: () => Promise<Gateway>): StdioFrontDoors {
  const running = new Set<StdioGateway>();
  let waiters: Array<() => void> = [];
  let closing = false;
  const observer = app.telemetry.mcpObserver(META_TOOL_NAMES, SEARCH_TOOLS);
  return {
    async open(flags, { input, output }) {
      if (closing) throw new QuiverError(ErrorCodes.unavailable, 'Quiver is shutting down');
      const identity = identityFromFlags(flags);
      const session = await runStdioGateway({ observer, gateway: await gatewayOf(), identity, stdin: input, stdout: output });
      running.add(session);
      void session.closed.then(() => {
        running.delete(session);
        if (running.size > 0) return;
        for (const wake of waiters) wake();
        waiters = [];
      });
      return { closed: session.closed };
    },
    drained: () => (running.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    async close() {
      closing = true;
      await Promise.allSettled([...running].map((session) => session.close()));
    },
  };
}

/** What both servers share: the session defaults and the runner of forwarded CLI commands. */
export interface ServeOptions {
  /** The exposure mode of sessions whose workspace sets none. */
  defaultExposureMode?: ExposureMode;
  /** Runs a command another `quiver` process forwards (folder stores only); none: no control socket. */
  forward?: ForwardedRunner;
}

/**
 * How long a server waits before its first sweep of queued and periodic jobs (issue #28): the
 * sweep's queries (prune, periodic runs, a claim and its job) ran on the embedded store's one
 * thread just as the server became ready, delaying its first answers. A job enqueued meanwhile
 * (a forwarded `plugin add`'s verification) still starts at once.
 */
const JOBS_FIRST_POLL_MS = 1_000;

/** How long requests still running at shutdown may finish before their connections are cut (ms). */
const SHUTDOWN_GRACE_MS = 1_000;

/** A listening HTTP server. */
export interface HttpServer {
  /** `http://host:port` with the port actually bound. */
  url: string;
  /** The first admin API key when this start created it (show it once), else undefined. */
  adminKey: string | undefined;
  close(): Promise<void>;
}

/** Serves the REST API and `/mcp` on host:port; refuses a non-loopback host unless `allowPublicBind`. */
export async function serveHttp(app: App, options: ServeOptions & { host: string; port: number; allowPublicBind?: boolean }): Promise<HttpServer> {
  const { host, port } = options;
  assertBindAllowed(host, options.allowPublicBind === true);
  // Issue #16: sessions in the database, so any replica serves them (QUIVER_MCP_SESSIONS=memory: this process only).
  const sessionStore = app.config.mcp.sessionStore === 'database' ? createAppSessionStore(app) : undefined;
  // Issue #24: on PostgreSQL each replica registers where the others reach it (paused calls' retries).
  const replicas = createReplicaRegistry(app, loadSecretKey({ configured: app.config.secretKey, homeDir: app.config.homeDir }).key);
  const appGateway = await createAppGateway(app, { ...options, storedSessions: sessionStore !== undefined, ...(replicas ? { replicaId: replicas.id } : {}) });
  if (sessionStore) registerSessionJobs(app, sessionStore, appGateway.gateway);
  // DNS-rebinding protection: only these Host names reach /mcp (and, without a configured resource URL, name the OAuth resource).
  const allowedHosts = isPublicBindHost(host) ? ['127.0.0.1', 'localhost', '::1', host] : ['127.0.0.1', 'localhost', '::1'];
  // Issue #27: access tokens beside API keys, the protected resource metadata and its challenges.
  // ... from an external issuer, or from the built-in authorization server (loopback binds by default).
  const authorizationServer = createBuiltInAuthorizationServer(app, host);
  const resourceServer = createResourceServer(app.apiKeys, app.config.oauth, allowedHosts, authorizationServer?.tokens);
  const mcp = mcpRoutes({
    gateway: appGateway.gateway,
    ...(sessionStore ? { sessionStore } : {}),
    ...(replicas ? { replicas: replicas.forwarding } : {}),
    observer: app.telemetry.mcpObserver(META_TOOL_NAMES, SEARCH_TOOLS),
    logger: app.logger.child({ part: 'mcp-http' }),
    // Session limits count against the API key and its organisation, whatever the request asks.
    ownerOf: (principal) => ({ key: principal.keyId, org: principal.orgId }),
    allowedHosts,
    challenge: resourceServer.challenge,
    // Issue #28: MCP POSTs wait for their turn before the API app builds anything for them.
    pacing: 'external',
  });
  const api = createApi({
    apiKeys: app.apiKeys,
    authenticator: resourceServer.authenticator,
    ...(resourceServer.challenge ? { challenge: resourceServer.challenge } : {}),
    modules: [...app.apiModules(), ...resourceServer.modules, ...(authorizationServer?.modules ?? []), mcp],
    logger: app.logger,
    telemetry: app.telemetry,
  });
  // Issue #23: read timeouts, a per-client connection cap, Connection: close after a 408/413.
  const guard = createHttpGuard(app.config.http, (request: Request, env: { incoming?: unknown }) =>
    authorizationServer?.server.handles(request) ? authorizationServer.server.fetch(request, env as never) : api.fetch(request, env),
  );
  const server = serve({ fetch: guard.fetch, hostname: host, port, serverOptions: guard.serverOptions, createServer: pacedServerFactory(new TurnGate()) });
  guard.attach(server as HttpServerType);
  authorizationServer?.attach(server as HttpServerType);
  const unwatch = app.telemetry.watch({ sessions: [() => mcp.handler.sessionCount] });
  let forwarding: ControlSocket | undefined;
  let adminKey: string | undefined;
  // Bridged stdio sessions get a gateway of their own: their sessions live in this process, not the session store.
  let bridgeGateway: Promise<AppGateway> | undefined;
  const doors = createStdioFrontDoors(app, async () => (await (bridgeGateway ??= createAppGateway(app, options))).gateway);
  const close = async () => {
    // Issue #16: /readyz answers 503 first, and for QUIVER_SHUTDOWN_DRAIN_SECONDS the server keeps
    // serving, so load balancers stop sending new requests before connections are refused.
    app.telemetry.readiness.startDraining();
    if (app.telemetry.settings.drainMs > 0) await new Promise((resolve) => setTimeout(resolve, app.telemetry.settings.drainMs));
    unwatch();
    await replicas?.close();
    // Bridged sessions end first (their bridges see the end), then the socket closes.
    await doors.close();
    await forwarding?.close();
    await (await bridgeGateway?.catch(() => undefined))?.close();
    // Issue #12: stop accepting, end the MCP sessions (their SSE streams would hold
    // `server.close` open for as long as a client stays connected), drop idle keep-alive
    // sockets, and give requests still running a short grace before cutting them.
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    const http = server as Partial<Pick<HttpServerType, 'closeIdleConnections' | 'closeAllConnections'>>;
    http.closeIdleConnections?.();
    await mcp.handler.close();
    http.closeIdleConnections?.();
    const cut = setTimeout(() => http.closeAllConnections?.(), SHUTDOWN_GRACE_MS);
    await stopped;
    clearTimeout(cut);
    await sessionStore?.close();
    await appGateway.close();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', () => resolve());
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(new QuiverError(ErrorCodes.unavailable, `cannot listen on ${host}:${port}: ${error.code ?? error.message}`, { cause: error })),
      );
    });
    forwarding = await startCliForwarding(app, options.forward, doors);
    // Servers run queued background jobs (verification, issue #10); one-shot commands only enqueue.
    app.jobs.start({ firstPollMs: JOBS_FIRST_POLL_MS });
    // Issue #11: rollouts route by the shared state and one replica at a time judges each.
    await app.rollouts.start();
    // Created only once the port is bound (issue #12): a start that fails must not make a key it never shows.
    adminKey = await app.apiKeys.ensureAdminKey();
  } catch (error) {
    await close();
    throw error;
  }
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  try {
    await replicas?.start(url);
  } catch (error) {
    await close();
    throw error;
  }
  return { url, adminKey, close };
}

/** A running stdio session. */
export interface StdioServer {
  /** The first admin API key when this start created it (show it once, on stderr), else undefined. */
  adminKey: string | undefined;
  /** Resolves when the client disconnects and no bridged stdio session (issue #26) is left. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves one MCP session for `identity` on stdin/stdout (or the given streams). */
export async function serveStdio(
  app: App,
  options: ServeOptions & { identity: SessionIdentity; stdin?: Readable; stdout?: Writable },
): Promise<StdioServer> {
  const appGateway = await createAppGateway(app, options);
  // Other `quiver serve --stdio` processes on this folder bridge into this one, which then
  // stays up until its own client and theirs have all gone.
  const doors = createStdioFrontDoors(app, () => Promise.resolve(appGateway.gateway));
  let forwarding: ControlSocket | undefined;
  try {
    forwarding = await startCliForwarding(app, options.forward, doors);
    app.jobs.start({ firstPollMs: JOBS_FIRST_POLL_MS });
    await app.rollouts.start();
    const running = await runStdioGateway({
      observer: app.telemetry.mcpObserver(META_TOOL_NAMES, SEARCH_TOOLS),
      gateway: appGateway.gateway,
      identity: options.identity,
      ...(options.stdin ? { stdin: options.stdin } : {}),
      ...(options.stdout ? { stdout: options.stdout } : {}),
    });
    // Last, so nothing after it can fail and lose the key (issue #12); printed by the caller at once.
    const adminKey = await app.apiKeys.ensureAdminKey().catch(async (error: unknown) => {
      await running.close();
      throw error;
    });
    return {
      adminKey,
      closed: running.closed.then(() => doors.drained()),
      async close() {
        await running.close();
        await doors.close();
        await forwarding?.close();
        await appGateway.close();
      },
    };
  } catch (error) {
    await forwarding?.close();
    await doors.close();
    await appGateway.close();
    throw error;
  }
}
