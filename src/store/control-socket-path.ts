/**
 * @module store/control-socket-path
 * Where the control socket of the server owning a data folder lives (control-socket.ts), apart
 * from the socket itself: a command forwarded to a running server finds it without loading the
 * server's side, its schemas or the folder's lock (issue #28).
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The Unix socket a serving Quiver opens beside its lock for other `quiver` commands
 * (control-socket.ts), in the data folder with the lock (data-dir-lock.ts).
 */
export const CONTROL_SOCKET_FILE = 'quiver-cli.sock';

/** Unix socket paths are limited to 107 bytes on Linux; longer data folders use a hashed name in the temp folder. */
const MAX_SOCKET_PATH = 100;

/** Where the control socket of the server owning `dataDir` lives. */
export function controlSocketPath(dataDir: string): string {
  const beside = join(dataDir, CONTROL_SOCKET_FILE);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 24);
  return join(tmpdir(), `quiver-cli-${digest}.sock`);
}
