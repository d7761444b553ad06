/**
 * @module cli/control-socket
 * One Quiver, many commands (issue #15): while `quiver serve` owns an embedded data folder,
 * no other process may open it, so a CLI command run beside the server is executed *by* the
 * server. The server listens on a Unix socket next to the data folder's lock; the CLI sends
 * its arguments, working directory and (when the command reads it) standard input, and the
 * server runs the very same command code against its own open app, returning the exit code
 * and what the command printed. Output and exit codes are therefore identical to a local run.
 *
 * Authentication is the socket file itself: it is created mode 0600 by the user who runs
 * Quiver, so only that user (or root) can connect — there is no key to copy. The socket
 * carries no HTTP API beyond `POST /cli`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import type { CommandSpec } from './command.ts';
import { CONTROL_SOCKET_FILE } from '../store/data-dir-lock.ts';

/** Unix socket paths are limited to 107 bytes on Linux; longer data folders use a hashed name in the temp folder. */
const MAX_SOCKET_PATH = 100;

/** Where the control socket of the server owning `dataDir` lives. */
export function controlSocketPath(dataDir: string): string {
  const beside = join(dataDir, CONTROL_SOCKET_FILE);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 24);
  return join(tmpdir(), `quiver-cli-${digest}.sock`);
}

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

export interface ControlSocketOptions {
  socketPath: string;
  run: ForwardedRunner;
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
  // The server owns the data folder (its lock is held), so a socket file here is a leftover.
  rmSync(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Created by listen() with the process umask: narrow it before anyone can use it.
  chmodSync(options.socketPath, 0o600);
  logger.debug({ path: options.socketPath }, 'CLI control socket listening');
  let closed = false;
  return {
    path: options.socketPath,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(options.socketPath, { force: true });
    },
  };
}

/** True for commands that may run inside a serving Quiver (not servers, not store-less ones). */
export function isForwardable(command: CommandSpec): boolean {
  return command.storeless !== true && command.forwardable !== false;
}
