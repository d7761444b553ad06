/**
 * @module test/sessions/two-replicas
 * Two gateways with their own HTTP handlers ("replicas") over one database and one local backend
 * with real fixture servers, behind one real HTTP server on loopback: the test says, per request,
 * which replica answers and as whom. Both session stores are `shared: true`, on PGlite too, so
 * each replica checks its cached copies as on PostgreSQL.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { marketplace, standardPlugins } from '../gateway/helpers.ts';
import type { Backend } from '../helpers/backends.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { createMcpHttpHandler, type McpHttpHandler } from '../../src/gateway/http.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import type { SessionIdentity } from '../../src/gateway/backend.ts';
import { createSessionStore, type SessionStore } from '../../src/sessions/index.ts';
import type { Database } from '../../src/store/database.ts';

/** The session limits both replicas' stores share. */
export const REPLICA_SESSION_LIMITS = { maxSessions: 50, maxSessionsPerKey: 20, maxSessionsPerOrg: 30, idleTtlMs: 60_000 };

/** One replica and how many requests it has answered. */
export interface Replica {
  gateway: Gateway;
  handler: McpHttpHandler<SessionIdentity>;
  store: SessionStore;
  served: number;
}

/** The two replicas, what they share, and the URL of their MCP endpoint. */
export interface TwoReplicas {
  db: Database;
  backend: LocalTestBackend;
  replicas: Replica[];
  url: URL;
  close(): Promise<void>;
}

/** Which replica answers a request (0 or 1), and the identity it is handled as. */
export type ReplicaRoute = (request: Request) => { replica: number; identity: SessionIdentity };

/** Starts the two replicas on a fresh database of `backendUnderTest`; `route` sends each request. */
export async function startTwoReplicas(backendUnderTest: Backend, route: ReplicaRoute): Promise<TwoReplicas> {
  let db: Database | undefined;
  let backend: LocalTestBackend | undefined;
  const replicas: Replica[] = [];
  let server: ReturnType<typeof serve> | undefined;
  // Handlers first (they end open streams), so the HTTP server has no connection left to wait for.
  const close = async () => {
    for (const replica of replicas) {
      await replica.handler.close();
      await replica.gateway.close();
      await replica.store.close();
    }
    await backend?.close();
    if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
    await db?.close();
  };
  try {
    db = await backendUnderTest.open();
    backend = await createLocalTestBackend({ plugins: standardPlugins(), marketplace });
    for (let index = 0; index < 2; index += 1) {
      const gateway = createGateway({ backend, storedSessions: true, options: { sessions: { sweepIntervalMs: 0 } } });
      const store = createSessionStore({ db, limits: REPLICA_SESSION_LIMITS, shared: true });
      const handler = createMcpHttpHandler<SessionIdentity>({ gateway, resolveIdentity: (principal) => principal, sessionStore: store });
      replicas.push({ gateway, handler, store, served: 0 });
    }
    server = serve({
      fetch: (request: Request) => {
        const { replica: index, identity } = route(request);
        const replica = replicas[index]!;
        replica.served += 1;
        return replica.handler.handle(request, identity);
      },
      hostname: '127.0.0.1',
      port: 0,
    });
    await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    return { db, backend, replicas, url, close };
  } catch (error) {
    await close();
    throw error;
  }
}
