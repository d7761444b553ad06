/**
 * @module cli/forward
 * The CLI's side of the control socket (see `store/control-socket.ts`): when a server owns the data
 * folder, send the command to it and print what it printed. No server listening (no socket
 * file, or a stale one left by a killed server) means "run here", which then takes over the
 * stale lock as usual.
 */
import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { ControlRequest, ControlResponse } from '../store/control-socket.ts';

/**
 * The server's answer, checked by hand: three fields do not need the schema library, which a
 * forwarded command would otherwise load for them alone (issue #28). Extra fields are dropped.
 */
function readAnswer(value: unknown): ControlResponse {
  const { exitCode, stdout, stderr } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (!Number.isInteger(exitCode) || typeof stdout !== 'string' || typeof stderr !== 'string') {
    throw new Error('expected {exitCode: integer, stdout: string, stderr: string}');
  }
  return { exitCode: exitCode as number, stdout, stderr };
}

/** Sends a command to the server behind `socketPath`; undefined when no server is listening there. */
export async function forwardToServer(socketPath: string, body: ControlRequest): Promise<ControlResponse | undefined> {
  if (!existsSync(socketPath)) return undefined;
  const payload = JSON.stringify(body);
  return new Promise<ControlResponse | undefined>((resolve, reject) => {
    const outgoing = request(
      { socketPath, path: '/cli', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200) {
            reject(new QuiverError(ErrorCodes.unavailable, `the running Quiver refused the command (${response.statusCode}): ${text.slice(0, 300)}`));
            return;
          }
          try {
            resolve(readAnswer(JSON.parse(text)));
          } catch (error) {
            reject(new QuiverError(ErrorCodes.unavailable, 'the running Quiver sent an unreadable answer', { cause: error }));
          }
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A socket file with nobody behind it: the server is gone, run locally.
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(undefined);
      else reject(new QuiverError(ErrorCodes.unavailable, `cannot reach the running Quiver at ${socketPath}: ${error.code ?? error.message}`, { cause: error }));
    });
    outgoing.end(payload);
  });
}
