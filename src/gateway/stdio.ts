/**
 * @module gateway/stdio
 * The gateway over stdio: one connection for the process's one client. stdout carries MCP only
 * (logs must go to stderr, STYLE.md habit 5). The opening message chooses the era (issue #24,
 * the 2026-07-28 versioning rules): one that carries the per-request `_meta` protocol version
 * (a `server/discover` probe, or any request of a 2026 client) pins the connection to the SDK v2
 * entry (`serveStdio`, strict modern) on a server from `Gateway.modernServer`; anything else
 * (`initialize`) opens a 2025-era session as before. When the client goes away (stdin ends),
 * the connection closes, which aborts in-flight calls so nothing keeps running for nobody.
 */
import type { Readable, Writable } from 'node:stream';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { StdioServerTransport as ModernStdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { SessionIdentity } from './backend.ts';
import { JsonLinesServerTransport } from './stdio-server-transport.ts';
import { installStdioCallLane, type StdioCallLane } from './stdio-call-lane.ts';
import { SessionState } from './session-state.ts';
import { observeMcpTransport, type McpRequestObserver } from '../telemetry/index.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import type { Server as ModernServer } from '@modelcontextprotocol/server';

export interface RunStdioGatewayOptions {
  gateway: Gateway;
  identity: SessionIdentity;
  stdin?: Readable;
  stdout?: Writable;
  /** Times and traces the session's MCP requests at its transport (issue #16). */
  observer?: McpRequestObserver;
}

/** A running stdio gateway. */
export interface StdioGateway {
  /** The 2025-era session, once the client opened one (undefined before, and for a 2026-07-28 client). */
  readonly session: GatewaySession | undefined;
  /** Which era the opening message chose; undefined until it came. */
  readonly era: 'legacy' | 'modern' | undefined;
  /** Plain plugin calls the 2025-era session answered past the SDK's dispatch (stdio-call-lane.ts). */
  readonly laneCalls: number;
  /** Resolves when the client disconnects or `close()` is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** True when a raw JSON-RPC line carries the 2026-07-28 `_meta` protocol-version claim. */
export function claimsModernEra(line: string): boolean {
  try {
    const message = JSON.parse(line) as { params?: { _meta?: Record<string, unknown> } } | null;
    return typeof message?.params?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
  } catch {
    return false;
  }
}

/** Resolves with the bytes read up to and including the first line, and stops reading there. */
function readOpening(stdin: Readable): Promise<{ head: Buffer; line: string } | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer | string) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      const head = Buffer.concat(chunks);
      const newline = head.indexOf(0x0a);
      if (newline < 0) return;
      done();
      resolve({ head, line: head.subarray(0, newline).toString('utf8') });
    };
    const onEnd = () => {
      done();
      resolve(undefined);
    };
    const done = () => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      stdin.pause();
    };
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
  });
}

/** Serves one MCP connection on stdin/stdout until the client disconnects. */
export async function runStdioGateway(options: RunStdioGatewayOptions): Promise<StdioGateway> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  let session: GatewaySession | undefined;
  let era: 'legacy' | 'modern' | undefined;
  let closeConnection: (() => Promise<void>) | undefined;
  let lane: StdioCallLane | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing = false;

  async function close(): Promise<void> {
    if (closing) return closed;
    closing = true;
    try {
      await closeConnection?.();
    } finally {
      // stdin was resumed for the transport: left flowing, it keeps the process alive for a
      // client that still holds the pipe open (SIGTERM must stop `serve --stdio` at once).
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      stdin.pause();
      resolveClosed();
    }
  }

  const onEnd = () => void close();

  async function open(head: Buffer, line: string): Promise<void> {
    // The opening bytes go back to the front of stdin and the chosen transport reads stdin itself
    // (issue #28: a PassThrough between them re-emitted every message, ~5 % of the server's CPU
    // per stdio call). stdin stays paused until the transport listens, so nothing is lost.
    stdin.unshift(head);
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    if (claimsModernEra(line)) {
      era = 'modern';
      const transport = new ModernStdioServerTransport(stdin, stdout);
      // The entry pins one server for the connection; its list-change notifications go to the
      // connection's subscriptions/listen streams (stamped with each id, filtered), never unasked.
      let pinned: ModernServer | undefined;
      const handle = serveStdio(async () => (pinned = await options.gateway.modernServer(options.identity)), { legacy: 'reject', transport });
      // serveStdio starts the transport at once: its listeners are on stdin.
      stdin.resume();
      // Issue #24: a catalog change (install, enablement, rules) reaches this client's listen streams.
      const stopListsChanged = options.gateway.onListsChanged(() => {
        if (!pinned) return;
        void Promise.allSettled([pinned.sendToolListChanged(), pinned.sendPromptListChanged(), pinned.sendResourceListChanged()]);
      });
      closeConnection = async () => {
        stopListsChanged();
        await handle.close();
      };
      return;
    }
    era = 'legacy';
    const opened = await options.gateway.openSession(options.identity);
    session = opened;
    // Issue #28: JSON per line without the SDK reader's second schema parse (stdio-server-transport.ts).
    const transport = new JsonLinesServerTransport(stdin, stdout);
    closeConnection = () => opened.close();
    await opened.connect(transport);
    // Issue #28: plain plugin calls skip the SDK's dispatch (stdio-call-lane.ts); installed on the
    // connected server's reader and under telemetry's wrapper, so its calls are measured as any.
    lane = opened instanceof SessionState ? installStdioCallLane(opened, transport) : undefined;
    if (options.observer) observeMcpTransport(transport, options.observer, opened.id);
    void opened.closed.then(() => {
      lane?.close();
      void close();
    });
    stdin.resume();
  }

  void readOpening(stdin).then(async (opening) => {
    if (!opening) return close();
    try {
      await open(opening.head, opening.line);
    } catch (error) {
      process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'the MCP connection could not open', error: (error as Error).message })}\n`);
      await close();
    }
  });

  return {
    get session() {
      return session;
    },
    get era() {
      return era;
    },
    get laneCalls() {
      return lane?.taken ?? 0;
    },
    closed,
    close,
  };
}
