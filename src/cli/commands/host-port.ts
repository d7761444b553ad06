/**
 * @module cli/commands/host-port
 * Parses `HOST:PORT`, `PORT` or `[v6]:PORT` for --http.
 */
import { invalidInput } from '../../core/errors.ts';

/** Host and port from a --http value, falling back to the configured ones. */
export function parseHostPort(value: unknown, fallback: { host: string; port: number }): { host: string; port: number } {
  if (typeof value !== 'string' || value === '') return { host: fallback.host, port: fallback.port };
  const match = /^(?:(?:\[([^\]]+)\]|([^:[\]]+)):)?(\d+)$/.exec(value);
  if (!match) throw invalidInput(`--http expects HOST:PORT or PORT, got '${value}'`);
  const port = Number(match[3]);
  if (port > 65535) throw invalidInput(`--http port ${port} is out of range`);
  return { host: match[1] ?? match[2] ?? fallback.host, port };
}
