/**
 * @module trust/egress-target
 * `HOST[:PORT]` as an admin types it (`quiver plugin allow NAME api.github.com`,
 * `127.0.0.1:5432`, `[::1]:6379`): validated and normalised (lower case, port 443 when none).
 */
import { isIP } from 'node:net';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { EgressRule } from '../runtime/egress-proxy.ts';

/** The port of a rule given without one (HTTPS, what most MCP servers call). */
export const defaultEgressPort = 443;

const hostName = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Parses `HOST[:PORT]`; throws invalid_input naming the problem. */
export function parseEgressTarget(text: string, port?: number): EgressRule {
  const trimmed = text.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(trimmed);
  let host: string;
  let portText: string | undefined;
  if (bracketed) [host, portText] = [bracketed[1]!, bracketed[2]];
  else if (isIP(trimmed) === 6) host = trimmed;
  else {
    const colon = trimmed.lastIndexOf(':');
    [host, portText] = colon < 0 ? [trimmed, undefined] : [trimmed.slice(0, colon), trimmed.slice(colon + 1)];
  }
  if (!(isIP(host) !== 0 || hostName.test(host))) {
    throw new QuiverError(ErrorCodes.invalidInput, `'${text}' is not a host name or IP address (expected HOST[:PORT], e.g. api.github.com:443 or 127.0.0.1:5432)`);
  }
  const value = portText !== undefined ? Number(portText) : (port ?? defaultEgressPort);
  if (!Number.isInteger(value) || value < 1 || value > 65_535 || (portText !== undefined && !/^\d{1,5}$/.test(portText))) {
    throw new QuiverError(ErrorCodes.invalidInput, `'${text}': the port must be a number from 1 to 65535`);
  }
  return { host, port: value };
}
