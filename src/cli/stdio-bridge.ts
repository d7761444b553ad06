/**
 * @module cli/stdio-bridge
 * One Quiver per data folder, any number of front doors (issue #26): `quiver serve --stdio`
 * started while another Quiver owns the embedded data folder does not open it (it cannot: the
 * folder is locked) but becomes a thin bridge to that Quiver's control socket
 * (`store/control-socket.ts`, `GET /stdio`). The server opens a stdio MCP session of its own for the
 * flags' identity; the bridge copies bytes between its stdin/stdout and that session untouched,
 * so every MCP revision and message the server's stdio front speaks passes through unchanged.
 */
import { request } from 'node:http';
import { existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { QuiverError, ErrorCodes, type ErrorCode } from '../core/errors.ts';
import { STDIO_FLAGS_HEADER, STDIO_UPGRADE, type StdioBridgeFlags } from '../store/control-socket.ts';

/** A connected bridge. */
export interface StdioBridge {
  /**
   * Resolves when the session is over: `client` when our stdin ended (the MCP client left),
   * `server` when the Quiver at the other end hung up first (it stopped).
   */
  finished: Promise<'client' | 'server'>;
  /** Hangs up (the server then closes the session). */
  close(): void;
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCodes));

/** The QuiverError of a refused bridge request, from the server's JSON error body. */
function refusal(status: number | undefined, text: string): QuiverError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof body.error?.code === 'string' && KNOWN_CODES.has(body.error.code) ? (body.error.code as ErrorCode) : ErrorCodes.unavailable;
    if (typeof body.error?.message === 'string') return new QuiverError(code, `the running Quiver refused the stdio session: ${body.error.message}`);
  } catch {
    // Not our JSON: report the status and the start of the text below.
  }
  return new QuiverError(ErrorCodes.unavailable, `the running Quiver refused the stdio session (${status}): ${text.slice(0, 300)}`);
}

/**
 * Connects `input`/`output` to a stdio session of the Quiver behind `socketPath`; undefined
 * when no Quiver is listening there (no socket file, or a stale one), so the caller serves itself.
 */
export async function bridgeStdio(socketPath: string, flags: StdioBridgeFlags, input: Readable, output: Writable): Promise<StdioBridge | undefined> {
  if (!existsSync(socketPath)) return undefined;
  return new Promise<StdioBridge | undefined>((resolve, reject) => {
    const outgoing = request({
      socketPath,
      path: '/stdio',
      method: 'GET',
      headers: { connection: 'Upgrade', upgrade: STDIO_UPGRADE, [STDIO_FLAGS_HEADER]: Buffer.from(JSON.stringify(flags)).toString('base64url') },
    });
    outgoing.on('upgrade', (_response, connection, head) => {
      if (head.length > 0) output.write(head);
      let clientLeft = false;
      const finished = new Promise<'client' | 'server'>((done) => {
        connection.once('close', () => {
          // Stop reading stdin, or a client that keeps it open would keep this process alive.
          input.unpipe(connection);
          input.pause();
          done(clientLeft ? 'client' : 'server');
        });
      });
      // Errors end the connection ('close' follows); the bridge reports how it ended, not why.
      connection.on('error', () => {});
      input.once('end', () => {
        clientLeft = true;
      });
      // `pipe` ends the connection's writing side when stdin ends: the server then closes the session.
      input.pipe(connection);
      connection.pipe(output, { end: false });
      resolve({
        finished,
        close: () => {
          clientLeft = true;
          connection.end();
        },
      });
    });
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => reject(refusal(response.statusCode, Buffer.concat(chunks).toString('utf8'))));
      response.on('error', reject);
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A socket file with nobody behind it: the server is gone, serve here.
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(undefined);
      else reject(new QuiverError(ErrorCodes.unavailable, `cannot reach the running Quiver at ${socketPath}: ${error.code ?? error.message}`, { cause: error }));
    });
    outgoing.end();
  });
}
