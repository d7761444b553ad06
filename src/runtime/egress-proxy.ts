/**
 * @module runtime/egress-proxy
 * Network egress limited to an allow-list, enforced outside the sandbox (issue #15 for installs;
 * the same mechanism can carry a plugin's allow-list). A sandboxed process has no network at
 * all (bubblewrap `--unshare-net`: only its own loopback); the one way out is a Unix socket,
 * bound into the sandbox, on which this proxy listens. It speaks HTTP `CONNECT host:port` (what
 * npm, pnpm and yarn use for an https registry through `https-proxy`), opens the connection
 * from the host only when the allow-list says so, and logs every decision with the host and
 * port. TLS stays end to end: the proxy sees the destination, never the traffic.
 *
 * Inside the sandbox, `egressBridgeScript` runs a tiny TCP listener on the sandbox's own
 * loopback that forwards each connection to the socket, and then the real command with its
 * proxy settings pointing at that listener.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../core/logger.ts';

/** One destination a sandboxed process may reach. */
export interface EgressRule {
  host: string;
  port: number;
}

/** A decision the proxy took; port 0 is a name lookup the sandbox's DNS stub refused (sandbox-egress.ts). */
export interface EgressDecision {
  label: string;
  host: string;
  port: number;
  allowed: boolean;
}

export interface EgressProxyOptions {
  /** Names the sandboxed command in logs and decisions (e.g. `weather-mcp install`). */
  label: string;
  allow: readonly EgressRule[];
  logger?: Logger;
  onDecision?: (decision: EgressDecision) => void;
  /** Largest request head read before the tunnel starts, bytes (default 8 KiB). */
  maxHeadBytes?: number;
}

/** A running proxy: the socket to bind into the sandbox, and how to stop it. */
export interface EgressProxy {
  /** The Unix socket (in a folder of its own, mode 0755; the socket 0666 so the sandbox user can connect). */
  readonly socketPath: string;
  readonly decisions: readonly EgressDecision[];
  close(): Promise<void>;
}

/** Parses `CONNECT host:port HTTP/1.x`; undefined for anything else. */
export function parseConnectLine(line: string): EgressRule | undefined {
  const match = /^CONNECT ([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5}) HTTP\/1\.[01]$/.exec(line.trim());
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1]!.replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** Parses `LOOKUP name HTTP/1.1` (a refused name lookup reported by the sandbox bridge); undefined otherwise. */
export function parseLookupLine(line: string): string | undefined {
  const match = /^LOOKUP ([A-Za-z0-9_.-]{1,253}) HTTP\/1\.[01]$/.exec(line.trim());
  return match ? match[1]!.toLowerCase() : undefined;
}

/** True when `destination` is on the allow-list (host names compared case-insensitively). */
export function egressAllowed(allow: readonly EgressRule[], destination: EgressRule): boolean {
  return allow.some((rule) => rule.port === destination.port && rule.host.toLowerCase() === destination.host);
}

/** Starts the proxy on a new Unix socket. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const logger = options.logger ?? silentLogger;
  const maxHead = options.maxHeadBytes ?? 8 * 1024;
  const folder = mkdtempSync(join(tmpdir(), 'quiver-egress-'));
  chmodSync(folder, 0o755);
  const socketPath = join(folder, 'egress.sock');
  const decisions: EgressDecision[] = [];
  const open = new Set<Socket>();

  const decide = (destination: EgressRule): boolean => {
    const allowed = destination.port !== 0 && egressAllowed(options.allow, destination);
    const decision = { label: options.label, host: destination.host, port: destination.port, allowed };
    decisions.push(decision);
    options.onDecision?.(decision);
    logger[allowed ? 'debug' : 'warn']({ egress: decision }, allowed ? 'egress allowed' : 'egress denied');
    return allowed;
  };

  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > maxHead) client.end('HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n');
        return;
      }
      client.off('data', onData);
      const line = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      const lookup = parseLookupLine(line);
      if (lookup !== undefined) {
        decide({ host: lookup, port: 0 });
        client.end('HTTP/1.1 204 No Content\r\n\r\n');
        return;
      }
      const destination = parseConnectLine(line);
      if (!destination) {
        client.end('HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      if (!decide(destination)) {
        client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\negress to ${destination.host}:${destination.port} is not allowed for ${options.label}\n`);
        return;
      }
      const upstream = connect(destination.port, destination.host);
      open.add(upstream);
      upstream.on('close', () => open.delete(upstream));
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      upstream.on('error', (error) => {
        if (!client.writableEnded && upstream.connecting) client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\n${error.message}\n`);
        client.destroy();
      });
      client.on('close', () => upstream.destroy());
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // The sandbox runs as another user (nobody): it must be able to connect. The folder is private to
  // this run; what the socket grants is only the allow-list.
  chmodSync(socketPath, 0o666);
  let closed = false;
  return {
    socketPath,
    decisions,
    async close() {
      if (closed) return;
      closed = true;
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The program run inside the sandbox (`node -e SCRIPT SOCKET COMMAND ARGS…`): a loopback TCP
 * listener forwarding to the proxy's socket, then COMMAND with HTTP(S)_PROXY and npm's proxy
 * settings pointing at it; exits with COMMAND's code. Plain JavaScript, Node built-ins only,
 * because the sandbox sees nothing of Quiver's own files.
 */
export const egressBridgeScript = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, command, ...args] = process.argv.slice(1);
const server = net.createServer((inbound) => {
  const outbound = net.connect(socketPath);
  inbound.pipe(outbound); outbound.pipe(inbound);
  inbound.on('error', () => outbound.destroy()); outbound.on('error', () => inbound.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const proxy = 'http://127.0.0.1:' + server.address().port;
  const env = { ...process.env, HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy,
    npm_config_https_proxy: proxy, npm_config_proxy: proxy, NO_PROXY: '', no_proxy: '' };
  const child = spawn(command, args, { stdio: 'inherit', env });
  child.on('error', (error) => { console.error(String(error)); process.exit(127); });
  child.on('exit', (code, signal) => { server.close(); process.exit(code === null ? 128 : code); });
});
`;
