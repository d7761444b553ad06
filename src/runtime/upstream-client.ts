/**
 * @module runtime/upstream-client
 * One live MCP client connection to one plugin server: a local process over stdio (through
 * `ProcessTransport`) or a remote endpoint over Streamable HTTP, falling back to SSE for
 * older servers (seed 003, "Performance and Connection Management": a persistent
 * connection, reused across calls). It loads both MCP client stacks, so its importers load it
 * where a connection is made (issue #28: an idle server without plugins never does); the
 * connection's types and the list helpers are in `upstream-connection.ts`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { withoutMcpErrorPrefix } from '../core/mcp-error-text.ts';
import { ErrorCodes, QuiverError } from '../core/errors.ts';
import type { CgroupHandle } from './cgroup.ts';
import { currentForwardedHeaders } from '../core/forwarded-headers.ts';
import { isModernVersion, MODERN_PROTOCOL_VERSION, probeEra } from './era-probe.ts';
import { ModernUpstreamClient, newModernSdkClient, toMcpError, type ModernStart } from './modern-client.ts';
import { ProcessTransport, type ExitInfo } from './process-transport.ts';
import type { Redactor } from './redact.ts';
import type { Launch } from './sandbox.ts';
import { sandboxUid } from './sandbox-identity.ts';
import type { HttpSpec, StdioSpec } from './types.ts';
import { clientInfo, EraProbeClosed, UPSTREAM_CLIENT_CAPABILITIES, type ConnectionEnd, type ConnectOptions, type ProtocolEra, type UpstreamConnection } from './upstream-connection.ts';


/** A new MCP client as Quiver connects to every plugin (its name, version and capabilities). */
export function newUpstreamClient(): Client {
  return new Client(clientInfo, { capabilities: { ...UPSTREAM_CLIENT_CAPABILITIES } });
}

/**
 * The connection handle of a plugin without a process of Quiver's (a remote endpoint, or a
 * server inside Quiver): it ends when the client closes; `release` lets go of what is behind
 * the client when Quiver closes it (a remote session, an in-process server).
 */
export function processlessConnection(
  client: Client,
  options: { clock: { now(): number }; lostReason: string; release(): Promise<void>; era?: ProtocolEra },
): UpstreamConnection {
  let open = true;
  let closing = false;
  let ended: ConnectionEnd | undefined;
  const listeners: Array<(end: ConnectionEnd) => void> = [];
  const finish = (end: ConnectionEnd): void => {
    if (ended) return;
    ended = end;
    open = false;
    for (const listener of listeners.splice(0)) listener(end);
  };
  client.onclose = () => finish({ requested: closing, reason: closing ? 'stopped by Quiver' : options.lostReason });
  client.onerror = () => undefined;
  return {
    client,
    era: options.era ?? 'legacy',
    pid: undefined,
    startedAt: options.clock.now(),
    launch: undefined,
    isOpen: () => open,
    onEnd(listener) {
      if (ended) listener(ended);
      else listeners.push(listener);
    },
    stderrTail: () => '',
    async close() {
      closing = true;
      open = false;
      await options.release();
      await client.close().catch(() => undefined);
      finish({ requested: true, reason: 'stopped by Quiver' });
    },
  };
}

function describeExit(info: ExitInfo | undefined): string {
  if (!info) return 'the connection closed';
  if (info.signal === 'SIGKILL') return 'the process was killed (SIGKILL: a resource limit, e.g. memory, or an external kill)';
  if (info.signal) return `the process was killed by ${info.signal}`;
  return `the process exited with code ${info.code}`;
}

function tail(text: string, redact: Redactor): string {
  const cleaned = redact(text).trim();
  return cleaned.length === 0 ? '' : `; stderr: ${cleaned.slice(-600)}`;
}

/** Why a start failed, from what the plugin answered: its own JSON-RPC error is the best diagnostic there is. */
function refusal(error: unknown): string | undefined {
  const mcp = toMcpError(error);
  if (!(mcp instanceof McpError) || mcp.code === McpErrorCode.ConnectionClosed || mcp.code === McpErrorCode.RequestTimeout) return undefined;
  const supported = (mcp.data as { supported?: unknown } | undefined)?.supported;
  const versions = Array.isArray(supported) ? ` (supported: ${supported.join(', ')})` : '';
  return `refused the MCP handshake: ${withoutMcpErrorPrefix(mcp.message)}${versions}`;
}

/** True when the plugin's refusal names a 2026-07-28 (or later) version: it is a modern plugin. */
function modernEvidence(error: unknown): boolean {
  const data = (toMcpError(error) as { data?: { supported?: unknown } }).data;
  return Array.isArray(data?.supported) && data.supported.some((version) => typeof version === 'string' && isModernVersion(version));
}

/** How long the era probe waits for a silent plugin before taking it for a legacy one. */
function probeTimeoutMs(startTimeoutMs: number, hint: ProtocolEra | undefined): number {
  // A known modern plugin gets the whole start time; an unknown one is most likely legacy, and some
  // legacy servers never answer a request before `initialize`.
  return hint === 'modern' ? startTimeoutMs : Math.min(startTimeoutMs, 10_000);
}

/** Who Quiver says it is to a plugin: the runtime's name and capabilities, or another caller's (the verification probe's). */
export interface ClientIdentity {
  clientInfo: { name: string; version: string };
  capabilities: typeof UPSTREAM_CLIENT_CAPABILITIES | Record<string, never>;
}

const runtimeIdentity: ClientIdentity = { clientInfo, capabilities: UPSTREAM_CLIENT_CAPABILITIES };

/**
 * The handshake of the era the plugin speaks (MCP 2026-07-28 basic/versioning, stdio): a plugin
 * known to be legacy gets `initialize` at once; otherwise a `server/discover` probe decides. The
 * client is `prepare`d (its close handler set) before it connects. Exported for the verification
 * probe, which starts plugins on its own transport but must meet them in the era the runtime will.
 */
export async function stdioHandshake(
  transport: ProcessTransport,
  hint: ProtocolEra | undefined,
  options: Pick<ConnectOptions, 'startTimeoutMs' | 'signal'>,
  prepare: (client: Client) => void,
  identity: ClientIdentity = runtimeIdentity,
): Promise<{ client: Client; era: ProtocolEra }> {
  const legacy = async (): Promise<{ client: Client; era: ProtocolEra }> => {
    const client = new Client(identity.clientInfo, { capabilities: { ...identity.capabilities } });
    prepare(client);
    await client.connect(transport, { timeout: options.startTimeoutMs });
    return { client, era: 'legacy' };
  };
  if (hint === 'legacy') return legacy();
  const verdict = await probeEra(transport, { clientInfo: identity.clientInfo, capabilities: identity.capabilities, timeoutMs: probeTimeoutMs(options.startTimeoutMs, hint), signal: options.signal });
  if (verdict.kind === 'legacy') return legacy();
  if (verdict.kind === 'closed') throw new EraProbeClosed();
  if (verdict.kind === 'unsupported') throw new McpError(-32022, verdict.message, { supported: verdict.supported });
  return connectModern(transport, { discover: verdict.discover }, options, prepare, identity);
}

/** Connects the v2 client over `transport` in the 2026-07-28 era and wraps it for the runtime. */
async function connectModern(
  transport: unknown,
  start: ModernStart | 'auto',
  options: Pick<ConnectOptions, 'startTimeoutMs' | 'signal'>,
  prepare: (client: Client) => void,
  identity: ClientIdentity = runtimeIdentity,
): Promise<{ client: Client; era: ProtocolEra }> {
  const inner = newModernSdkClient(identity.clientInfo, { ...identity.capabilities }, start);
  const client = new ModernUpstreamClient(inner, identity.clientInfo, { ...identity.capabilities });
  prepare(client);
  await translatedConnect(() =>
    inner.connect(transport as Parameters<typeof inner.connect>[0], {
      timeout: options.startTimeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(start !== 'auto' && 'discover' in start ? { prior: { kind: 'modern', discover: start.discover as never } } : {}),
    }),
  );
  // A plugin that cannot open the stream still works; its list is then read at each sync only.
  client.followToolList(() => undefined);
  return { client, era: 'modern' };
}

async function translatedConnect(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    throw toMcpError(error);
  }
}

/** Starts a stdio plugin from a prepared launch and completes the MCP handshake of its era. */
export async function connectStdio(
  spec: StdioSpec,
  launch: Launch,
  options: ConnectOptions & { cgroup?: CgroupHandle; stopGraceMs: number },
): Promise<UpstreamConnection> {
  const transport = new ProcessTransport({
    command: launch.command,
    args: launch.args,
    env: launch.env,
    cwd: launch.cwd,
    cgroup: options.cgroup,
    stopGraceMs: options.stopGraceMs,
  });
  let exit: ExitInfo | undefined;
  let open = true;
  let ended: ConnectionEnd | undefined;
  const listeners: Array<(end: ConnectionEnd) => void> = [];
  const finish = (end: ConnectionEnd): void => {
    if (ended) return;
    ended = end;
    open = false;
    for (const listener of listeners.splice(0)) listener(end);
  };
  transport.onexit = (info) => {
    exit = info;
  };
  const prepare = (client: Client): void => {
    client.onclose = () => {
      open = false;
      let reason = describeExit(exit);
      // Read before the cgroup is removed: was the process killed for exceeding its memory limit?
      if (!exit?.requested && (options.cgroup?.oomKills() ?? 0) > 0) reason += ' (out of memory: killed by the kernel for exceeding its memory limit)';
      finish({ requested: exit?.requested ?? false, reason });
      // The leader is gone; make sure nothing it spawned lingers (idempotent).
      void transport.close();
    };
    client.onerror = () => {
      // Protocol errors surface on the pending requests; nothing to do here.
    };
  };
  const abortStart = (): void => void transport.close();
  options.signal?.addEventListener('abort', abortStart, { once: true });
  let handshake: { client: Client; era: ProtocolEra };
  try {
    if (options.signal?.aborted) throw options.signal.reason;
    handshake = await stdioHandshake(transport, spec.protocolEra, options, prepare);
  } catch (error) {
    const stderr = transport.stderrTail;
    const timedOut = exit === undefined && error instanceof McpError && error.code === McpErrorCode.RequestTimeout;
    await transport.close();
    if (options.signal?.aborted) throw options.signal.reason;
    let why = timedOut ? `did not complete the MCP handshake within ${options.startTimeoutMs} ms` : (refusal(error) ?? `failed to start: ${error instanceof EraProbeClosed ? error.message : describeExit(exit)}`);
    if (launch.description.sandboxed && /Permission denied/.test(stderr)) {
      why += ` (the sandbox runs as uid ${sandboxUid}: every folder bound into it, and the folders above it, must be reachable by that user)`;
    }
    // What the plugin showed of its era: the supervisor remembers it and starts the plugin again in that era.
    const eraEvidence: ProtocolEra | undefined = error instanceof EraProbeClosed ? 'legacy' : spec.protocolEra === 'legacy' && modernEvidence(error) ? 'modern' : undefined;
    throw new QuiverError(ErrorCodes.unavailable, options.redact(`plugin '${spec.pluginName}' ${why}${tail(stderr, options.redact)}`), {
      details: { reason: timedOut ? 'start_timeout' : 'start_failed', pluginId: spec.pluginId, exitCode: exit?.code, signal: exit?.signal, ...(eraEvidence ? { eraEvidence } : {}) },
    });
  } finally {
    options.signal?.removeEventListener('abort', abortStart);
  }
  const { client, era } = handshake;
  return {
    client,
    era,
    pid: transport.pid,
    startedAt: options.clock.now(),
    launch: launch.description,
    isOpen: () => open,
    onEnd(listener) {
      if (ended) listener(ended);
      else listeners.push(listener);
    },
    stderrTail: () => options.redact(transport.stderrTail),
    async close() {
      const wasOpen = open;
      open = false;
      await transport.close();
      // The SDK's onclose normally fires when the process closes; make sure listeners run.
      if (wasOpen || !ended) finish({ requested: true, reason: 'stopped by Quiver' });
      await client.close().catch(() => undefined);
    },
  };
}

/** The `quiver plugin authorize` flag naming an owner label ('user:alice' -> ' --user alice'); '' for the hub's. */
function ownerFlag(owner: string | undefined): string {
  if (owner === undefined) return '';
  const colon = owner.indexOf(':');
  return `${owner.startsWith('user:') ? ' --user' : ' --org'} ${owner.slice(colon + 1)}`;
}

/**
 * Connects to a remote plugin. A plugin not known to be legacy is first tried in the 2026-07-28
 * era the v2 SDK's `auto` way (a modern request; a `400` without a recognised modern error means
 * legacy); a legacy plugin gets Streamable HTTP, falling back to the older SSE transport.
 */
export async function connectHttp(spec: HttpSpec, options: ConnectOptions): Promise<UpstreamConnection> {
  const url = new URL(spec.url);
  const headers = spec.headers;
  // Set when the server answered 401: it wants an OAuth authorization Quiver does not hold (MCP authorization).
  let unauthorized = false;
  // Set when a 401 names protected resource metadata (RFC 9728): the server signs users in with OAuth (MCP authorization).
  let oauthChallenge = false;
  let authorizationFailure: unknown;
  // Set when the network guard refused the plugin's address: that, not a generic failure, is the error.
  let addressRefusal: QuiverError | undefined;
  const send = options.fetch ?? fetch;
  const withHeaders: typeof fetch = async (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    // Issue #24: Mcp-Param-* headers the client addressed to the plugin (never over what the SDK or the install set).
    for (const [name, value] of Object.entries(currentForwardedHeaders())) if (!merged.has(name)) merged.set(name, value);
    let token: string | undefined;
    try {
      token = await options.authorization?.(spec.url, spec.authorizationOwner);
    } catch (error) {
      authorizationFailure = error; // an expired authorization that cannot be refreshed says how to connect
      throw error;
    }
    if (token !== undefined) merged.set('authorization', `Bearer ${token}`);
    let response: Response;
    try {
      response = await send(input, { ...init, headers: merged });
    } catch (error) {
      if (error instanceof QuiverError && error.code === ErrorCodes.forbidden) addressRefusal = error;
      throw error;
    }
    if (response.status === 401) {
      unauthorized = true;
      if (/\bresource_metadata\s*=/i.test(response.headers.get('www-authenticate') ?? '')) oauthChallenge = true;
    }
    return response;
  };
  const problems: string[] = [];
  if (spec.protocolEra !== 'legacy') {
    const transport = new ModernHttpTransport(url, { requestInit: { headers }, fetch: withHeaders });
    const start: ModernStart | 'auto' = spec.protocolEra === 'modern' ? { pin: MODERN_PROTOCOL_VERSION } : 'auto';
    let made: { client: Client; era: ProtocolEra } | undefined;
    try {
      made = await connectModern(transport, start, options, () => undefined);
    } catch (error) {
      problems.push(options.redact(`2026-07-28: ${(error as Error).message}`));
    }
    if (made) {
      const modern = made.client as ModernUpstreamClient;
      if (modern.protocolVersion !== undefined && isModernVersion(modern.protocolVersion)) {
        return processlessConnection(made.client, { clock: options.clock, lostReason: 'the remote connection closed', release: async () => undefined, era: 'modern' });
      }
      // `auto` found a legacy server and ran its handshake: close that session, speak 2025 below.
      await transport.terminateSession().catch(() => undefined);
      await made.client.close().catch(() => undefined);
    }
  }
  const attempts: Array<() => { client: Client; close: () => Promise<void>; transport: StreamableHTTPClientTransport | SSEClientTransport }> = [
    () => {
      const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: withHeaders });
      return { client: newUpstreamClient(), transport, close: () => transport.terminateSession().catch(() => undefined) };
    },
    () => {
      const transport = new SSEClientTransport(url, { requestInit: { headers }, fetch: withHeaders });
      return { client: newUpstreamClient(), transport, close: async () => undefined };
    },
  ];
  for (const attempt of attempts) {
    const { client, transport, close: terminate } = attempt();
    try {
      await client.connect(transport, { timeout: options.startTimeoutMs });
    } catch (error) {
      problems.push(options.redact(`${transport.constructor.name}: ${(error as Error).message}`));
      await client.close().catch(() => undefined);
      continue;
    }
    return processlessConnection(client, { clock: options.clock, lostReason: 'the remote connection closed', release: terminate });
  }
  if (authorizationFailure instanceof QuiverError) throw authorizationFailure;
  if (addressRefusal !== undefined) throw addressRefusal;
  if (unauthorized && Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
    // It refused the credential the admin declared: that, not OAuth, is what to fix first.
    throw new QuiverError(
      ErrorCodes.missingCredential,
      `remote plugin '${spec.pluginName}' at ${url.origin}${url.pathname} refused the Authorization header it was installed with (it answered 401); ` +
        `replace the credential, or if the server signs users in with OAuth, reinstall it without the header and run 'quiver plugin authorize ${spec.url}${ownerFlag(spec.authorizationOwner)}'`,
      { kind: 'user', details: { reason: 'credential_refused', pluginId: spec.pluginId } },
    );
  }
  if (unauthorized) {
    // Not a hang and not a generic failure: say how to connect (issue #27).
    throw new QuiverError(
      ErrorCodes.missingCredential,
      `remote plugin '${spec.pluginName}' at ${url.origin}${url.pathname} requires an OAuth authorization Quiver does not hold (it answered 401); ` +
        `authorize it with 'quiver plugin authorize ${spec.url}${ownerFlag(spec.authorizationOwner)}' (opens the server's sign-in in a browser)`,
      { kind: 'user', details: { reason: 'unauthorized', oauth: oauthChallenge, pluginId: spec.pluginId } },
    );
  }
  throw new QuiverError(ErrorCodes.unavailable, options.redact(`cannot reach remote plugin '${spec.pluginName}' at ${url.origin}${url.pathname}: ${problems.join('; ')}`), {
    details: { reason: 'connect_failed', pluginId: spec.pluginId },
  });
}
