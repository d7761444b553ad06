/**
 * @module store/control-socket
 * One Quiver, many commands (issue #15): while `quiver serve` owns an embedded data folder,
 * no other process may open it, so a CLI command run beside the server is executed *by* the
 * server. The server listens on a Unix socket next to the data folder's lock; the CLI sends
 * its arguments, working directory and (when the command reads it) standard input, and the
 * server runs the very same command code against its own open app, returning the exit code
 * and what the command printed. Output and exit codes are therefore identical to a local run.
 *
 * The same socket is the back door of `quiver serve --stdio` run beside a server (issue #26):
 * `GET /stdio` upgraded to a raw byte stream carries one MCP stdio session, opened by the
 * server for the identity the bridge's flags name (`stdio-bridge.ts` is the other end).
 *
 * Authentication is the socket file itself: it is created mode 0600 by the user who runs
 * Quiver, so only that user (or root) can connect — there is no key to copy. That user could
 * open the data folder with any identity anyway, so the flags a bridge sends widen nothing.
 * The socket carries no HTTP API beyond `POST /cli` and `GET /stdio`.
 *
 * It lives in the store layer beside the data folder's lock (data-dir-lock.ts): it is how other
 * processes share the folder the lock gives to one, and both ends (the CLI and the server the
 * composition root wires) import it from below (issue #28: no cli <-> composition cycle).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex, Readable, Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { chmodSync, rmSync } from 'node:fs';
import { z } from 'zod';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';

// The socket's path, for both ends (the CLI finds it without loading this module, issue #28).
export { controlSocketPath } from './control-socket-path.ts';

/** What the CLI sends. */
export const controlRequestSchema = z.strictObject({
  argv: z.array(z.string().max(100_000)).max(1_000),
  cwd: z.string().min(1).max(4_096),
  stdin: z.string().max(1024 * 1024).optional(),
});
export type ControlRequest = z.infer<typeof controlRequestSchema>;

/** What the server answers. */
export const controlResponseSchema = z.object({
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
});
export type ControlResponse = z.infer<typeof controlResponseSchema>;

/** Runs one forwarded command inside the server (runCli with the server's app). */
export type ForwardedRunner = (request: ControlRequest) => Promise<ControlResponse>;

/** The upgrade token of a bridged stdio session. */
export const STDIO_UPGRADE = 'quiver-mcp-stdio';
/** The request header carrying the bridged session's flags (base64url JSON). */
export const STDIO_FLAGS_HEADER = 'x-quiver-stdio-flags';

const flagText = z.string().max(1_000);
/** The session flags a bridged `quiver serve --stdio` passes on (the same names as its options). */
export const stdioBridgeFlagsSchema = z.strictObject({
  workspace: flagText.optional(),
  project: flagText.optional(),
  org: flagText.optional(),
  user: flagText.optional(),
  role: z.array(flagText).max(100).optional(),
  tier: flagText.optional(),
  exposure: flagText.optional(),
  'allow-tool': z.array(flagText).max(1_000).optional(),
});
export type StdioBridgeFlags = z.infer<typeof stdioBridgeFlagsSchema>;

/**
 * Opens one MCP stdio session inside the server reading `input` and writing `output`; resolves
 * once the session is open (a refusal throws, and the bridge is told why), with a promise of its end.
 */
export type StdioSessionOpener = (flags: StdioBridgeFlags, streams: { input: Readable; output: Writable }) => Promise<{ closed: Promise<void> }>;

export interface ControlSocketOptions {
  socketPath: string;
  run: ForwardedRunner;
  /** Serves bridged stdio sessions (`GET /stdio`); none: such requests are refused. */
  openStdio?: StdioSessionOpener;
  logger?: Logger;
  /** Largest request body, bytes (default 2 MiB). */
  maxBodyBytes?: number;
}

/** A listening control socket. */
export interface ControlSocket {
  readonly path: string;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`request larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the control socket; a stale socket file (no server behind it) is replaced. */
export async function startControlSocket(options: ControlSocketOptions): Promise<ControlSocket> {
  const logger = options.logger ?? silentLogger;
  const limit = options.maxBodyBytes ?? 2 * 1024 * 1024;
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== '/cli') {
      reply(404, { error: 'only POST /cli is served here' });
      return;
    }
    void (async () => {
      let parsed: ControlRequest;
      try {
        const body = await readBody(request, limit);
        const result = controlRequestSchema.safeParse(JSON.parse(body));
        if (!result.success) throw new Error(result.error.issues.map((issue) => issue.message).join('; '));
        parsed = result.data;
      } catch (error) {
        reply(400, { error: `bad control request: ${(error as Error).message}` });
        return;
      }
      try {
        reply(200, await options.run(parsed));
      } catch (error) {
        logger.error({ err: error }, 'forwarded CLI command failed');
        reply(500, { error: 'the command failed inside the server' });
      }
    })();
  });
  // Upgraded connections still count for `server.close()`, which would wait for them forever.
  const bridged = new Set<Duplex>();
  server.on('upgrade', (request: IncomingMessage, connection: Duplex, head: Buffer) => {
    bridged.add(connection);
    connection.once('close', () => bridged.delete(connection));
    void acceptStdioBridge(request, connection, head, options.openStdio, logger);
  });
  // The server owns the data folder (its lock is held), so a socket file here is a leftover.
  rmSync(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket file is created (bound) inside listen() with the process umask: under 0177 it is
    // born 0600, so no other user can connect in the moment before the chmod below (a connection
    // then could run commands or open an MCP session as this user). Unix-socket binds happen
    // synchronously within listen(), so the umask is narrowed for that call only.
    const previousUmask = process.umask(0o177);
    try {
      server.listen(options.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(previousUmask);
    }
  });
  // Belt and braces: the mode the socket must have whatever created it.
  chmodSync(options.socketPath, 0o600);
  logger.debug({ path: options.socketPath }, 'CLI control socket listening');
  let closed = false;
  return {
    path: options.socketPath,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      for (const connection of bridged) connection.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(options.socketPath, { force: true });
    },
  };
}

/** Answers a refused upgrade with a status and a JSON error, then hangs up. */
function refuseUpgrade(connection: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  connection.end(
    `HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : 'Service Unavailable'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * One bridged stdio session: parse the flags, open the session (its output held back until the
 * 101 is written, so no MCP byte precedes the HTTP answer), then the connection is raw MCP both ways.
 */
async function acceptStdioBridge(request: IncomingMessage, connection: Duplex, head: Buffer, open: StdioSessionOpener | undefined, logger: Logger): Promise<void> {
  // A bridge that hangs up mid-session must not take the server down.
  connection.on('error', (error) => logger.debug({ err: error }, 'bridged stdio connection failed'));
  if (request.url !== '/stdio' || request.headers.upgrade !== STDIO_UPGRADE || open === undefined) {
    refuseUpgrade(connection, 404, 'not_found', 'only GET /stdio with a quiver-mcp-stdio upgrade is served here');
    return;
  }
  let flags: StdioBridgeFlags;
  try {
    const header = request.headers[STDIO_FLAGS_HEADER];
    const text = typeof header === 'string' ? Buffer.from(header, 'base64url').toString('utf8') : '{}';
    const parsed = stdioBridgeFlagsSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
    flags = parsed.data;
  } catch (error) {
    refuseUpgrade(connection, 400, 'invalid_input', `bad stdio bridge request: ${(error as Error).message}`);
    return;
  }
  if (head.length > 0) connection.unshift(head);
  const output = new PassThrough();
  let session: { closed: Promise<void> };
  try {
    session = await open(flags, { input: connection, output });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const invalid = code === 'invalid_input';
    refuseUpgrade(connection, invalid ? 400 : 503, typeof code === 'string' ? code : 'unavailable', (error as Error).message);
    return;
  }
  connection.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: ${STDIO_UPGRADE}\r\nconnection: Upgrade\r\n\r\n`);
  output.pipe(connection);
  // The session ended (the bridge hung up, or the server stops): let the bridge see the end.
  void session.closed.then(() => {
    output.unpipe(connection);
    connection.end();
  });
}
