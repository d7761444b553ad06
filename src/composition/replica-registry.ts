/**
 * @module composition/replica-registry
 * This replica in the `mcp_replicas` table (issue #24), when Quiver runs on PostgreSQL: an id
 * made at start (the route sealed into its 2026-07-28 requestStates), the URL the other replicas
 * reach it at, and a heartbeat every 5 s. Another replica forwards a retry here only while the
 * heartbeat is younger than 20 s (`gateway/replica-forward.ts`); a clean shutdown removes the
 * row, and rows silent for an hour are removed by the next replica that starts or stops.
 *
 * The URL is `QUIVER_REPLICA_URL` when set (e.g. `http://$(POD_IP):7411` in Kubernetes), else
 * the address `quiver serve` listens on, with a wildcard host (0.0.0.0, ::) replaced by this
 * host's first non-loopback IPv4 address.
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { App } from './app-type.ts';
import { beatReplica, liveReplicaUrl, registerReplica, removeReplica } from '../sessions/replicas.ts';
import { forwardingKey, type ReplicaForwarding } from '../gateway/replica-forward.ts';

const HEARTBEAT_MS = 5_000;
const LIVE_MS = 20_000;
const STALE_MS = 3_600_000;

/** This replica's registration. */
export interface ReplicaRegistry {
  /** This replica's id. */
  id: string;
  /** What the `/mcp` handler needs to forward retries. */
  forwarding: ReplicaForwarding;
  /** Registers `url` (or `QUIVER_REPLICA_URL`) and starts the heartbeat; call once the server listens. */
  start(listenUrl: string): Promise<void>;
  /** Stops the heartbeat and removes the row. */
  close(): Promise<void>;
}

/** The URL other replicas reach this one at. */
export function replicaUrl(listenUrl: string, configured: string | undefined): string {
  if (configured) {
    const url = new URL(configured);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`QUIVER_REPLICA_URL must be an http(s) URL, got ${configured}`);
    return url.origin;
  }
  const url = new URL(listenUrl);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
    url.hostname = address ?? '127.0.0.1';
  }
  return url.origin;
}

/** The replica registry of a PostgreSQL app; undefined on the embedded store (one process, nothing to route). */
export function createReplicaRegistry(app: App, secretKey: Uint8Array): ReplicaRegistry | undefined {
  if (app.config.store.kind !== 'postgres') return undefined;
  const id = randomBytes(9).toString('base64url');
  const logger = app.logger.child({ part: 'replicas' });
  let url: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const beat = async (): Promise<void> => {
    if (!url) return;
    try {
      if (!(await beatReplica(app.db, id))) await registerReplica(app.db, id, url);
    } catch (error) {
      logger.warn({ err: error }, 'the replica heartbeat failed');
    }
  };
  return {
    id,
    forwarding: { self: id, key: forwardingKey(secretKey), urlOf: (replica) => liveReplicaUrl(app.db, replica, LIVE_MS) },
    async start(listenUrl) {
      url = replicaUrl(listenUrl, app.config.commandEnv['QUIVER_REPLICA_URL'] || undefined);
      await registerReplica(app.db, id, url);
      await removeReplica(app.db, '', STALE_MS).catch(() => undefined);
      timer = setInterval(() => void beat(), HEARTBEAT_MS);
      timer.unref();
      logger.debug({ replica: id, url }, 'replica registered');
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (url) await removeReplica(app.db, id, STALE_MS).catch((error: unknown) => logger.warn({ err: error }, 'removing the replica row failed'));
    },
  };
}
