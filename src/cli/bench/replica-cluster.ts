/**
 * @module cli/bench/replica-cluster
 * Several `quiver serve` replicas on one PostgreSQL database behind HAProxy (Debian's
 * package), round robin with no stickiness (issue #16). Used by the replica bench and the
 * replica tests. HAProxy health-checks `/healthz`, retries a request whose connection was
 * refused on another replica (`option redispatch`: a POST is never replayed once sent), and
 * names the replica that answered in an `x-quiver-replica` response header.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUIVER_BIN } from './bench-home.ts';

/** One running replica. */
export interface Replica {
  name: string;
  child: ChildProcess;
  pid: number;
  url: string;
  port: number;
}

/** A cluster of replicas behind HAProxy. */
export interface ReplicaCluster {
  replicas: Replica[];
  /** The load balancer's base URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** SIGKILLs one replica and waits until the process is gone. */
  kill(name: string): Promise<void>;
  /** Stops every replica (SIGTERM) and HAProxy. */
  close(): Promise<void>;
}

/** True when the `haproxy` binary is installed (scripts/provision/system.sh installs it). */
export function haproxyAvailable(): boolean {
  return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `quiver serve --http 127.0.0.1:0` and resolves with its URL once it listens. */
export function startReplica(name: string, env: Record<string, string>, timeoutMs = 60_000): Promise<Replica> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, 'serve', '--json', '--http', '127.0.0.1:0'], { env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`replica ${name} did not start: ${err.slice(-400)}`));
    }, timeoutMs);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const url = (JSON.parse(line) as { url: string }).url;
      resolve({ name, child, pid: child.pid!, url, port: Number(new URL(url).port) });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited with ${code}: ${err.slice(-400)}`));
    });
  });
}

function haproxyConfig(port: number, replicas: readonly Replica[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 120s',
    '  timeout server 120s',
    // A replica slow to answer one check under load is not down: three failed checks are.
    '  timeout check 5s',
    '  retries 3',
    '  option redispatch 1',
    // A new server connection per request: an idle pooled connection to a replica that was just
    // SIGKILLed fails only once the request is on it, and HAProxy cannot safely replay a sent
    // POST (the client got "other side closed"); a refused new connection is retried elsewhere.
    '  http-reuse never',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-response set-header x-quiver-replica %s',
    ...replicas.map((replica) => `  server ${replica.name} 127.0.0.1:${replica.port} check inter 500 fall 3 rise 1`),
    '',
  ].join('\n');
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill(signal);
  await closed;
}

/** Starts `count` replicas with `env` (which names the PostgreSQL database) and HAProxy in front. */
export async function startReplicaCluster(count: number, env: Record<string, string>): Promise<ReplicaCluster> {
  const replicas: Replica[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'quiver-haproxy-'));
  let proxy: ChildProcess | undefined;
  const close = async () => {
    if (proxy) await stop(proxy, 'SIGTERM');
    await Promise.allSettled(replicas.map((replica) => stop(replica.child, 'SIGTERM')));
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    // The first start migrates the database; the others start together after it.
    replicas.push(await startReplica('r0', env));
    const others = await Promise.allSettled(Array.from({ length: count - 1 }, (_, index) => startReplica(`r${index + 1}`, env)));
    for (const started of others) if (started.status === 'fulfilled') replicas.push(started.value);
    const failed = others.find((started) => started.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const port = await freePort();
    const config = join(folder, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(port, replicas));
    proxy = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let proxyErrors = '';
    proxy.stderr!.on('data', (d) => (proxyErrors += d));
    await waitForPort(port, 10_000).catch((error: unknown) => {
      throw new Error(`haproxy did not start: ${proxyErrors.slice(-400) || (error as Error).message}`);
    });
    return {
      replicas,
      url: `http://127.0.0.1:${port}`,
      async kill(name) {
        const replica = replicas.find((candidate) => candidate.name === name);
        if (!replica) throw new Error(`no replica ${name}`);
        await stop(replica.child, 'SIGKILL');
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
