/**
 * @module gateway/replica-forward
 * A 2026-07-28 retry that resumes a call paused on another replica (issue #24). The paused call
 * lives in the process that started it (its plugin connection waits on the client's answer), and
 * a load balancer may send the client's retry anywhere. The sealed `requestState` names the
 * replica holding the call (`mrtr/request-state.ts`); the replica that receives the retry checks
 * the state (for this principal and this request: a forged, altered or expired state is answered
 * here, never forwarded), looks up that replica's URL (`urlOf`: the replica table, live rows
 * only) and forwards the request there unchanged, with the client's own credentials, plus a
 * header signed with a key derived from the hub's secret key: the receiving replica serves a
 * signed request itself (one hop, no loops) and refuses a forged one. The answer, an SSE stream
 * or JSON, is passed back as it comes.
 */
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { SessionIdentity } from './backend.ts';
import type { Gateway } from './gateway.ts';

/** The header of a forwarded request: `v1.<from>.<at>.<mac>`. */
export const FORWARDED_HEADER = 'x-quiver-forwarded';

/** How long a forwarded request's signature is accepted, ms (clock skew between replicas included). */
const SIGNATURE_TTL_MS = 60_000;

/** What forwarding between replicas needs. */
export interface ReplicaForwarding {
  /** This replica's id (the route sealed into its states). */
  self: string;
  /** The key forwarded requests are signed with (`forwardingKey` of the hub's secret key). */
  key: Uint8Array;
  /** The base URL of a live replica (`http://host:port`), or undefined when it is gone. */
  urlOf(replica: string): Promise<string | undefined>;
  now?: () => number;
}

/** The signing key of forwarded requests, derived (HKDF-SHA256) from the hub's secret key. */
export function forwardingKey(secretKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'quiver replica forward v1', 32));
}

function mac(key: Uint8Array, from: string, at: number, body: string): Buffer {
  const digest = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', key).update(`${from}\n${at}\n${digest}`).digest();
}

/** The signed header value for a request body forwarded by `from` at `at`. */
export function signForward(key: Uint8Array, from: string, at: number, body: string): string {
  return `v1.${from}.${at}.${mac(key, from, at, body).toString('base64url')}`;
}

/** `none`: not forwarded; `valid`: forwarded by a replica holding the key, recently; `invalid`: refuse it. */
export function checkForward(key: Uint8Array, header: string | null, body: string, now: number): 'none' | 'valid' | 'invalid' {
  if (header === null) return 'none';
  const match = /^v1\.([\w-]{1,64})\.(\d{1,16})\.([\w-]{43})$/.exec(header);
  if (!match) return 'invalid';
  const at = Number(match[2]);
  if (Math.abs(now - at) > SIGNATURE_TTL_MS) return 'invalid';
  const given = Buffer.from(match[3]!, 'base64url');
  const expected = mac(key, match[1]!, at, body);
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'invalid';
}

// Hop-by-hop headers and those the body's new framing decides are not forwarded.
const DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer', 'proxy-authorization', FORWARDED_HEADER]);

/**
 * Sends `request` (whose body was read as `body`) to the replica at `baseUrl`, signed; resolves
 * with its answer streamed back, or undefined when the replica cannot be reached. The Host header
 * is kept, so the owner applies the same Host/Origin checks the client's request passed here.
 */
export function forwardTo(forwarding: ReplicaForwarding, request: Request, body: string, baseUrl: string): Promise<Response | undefined> {
  const target = new URL('/mcp', baseUrl);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    if (!DROPPED.has(name)) headers[name] = value;
  });
  headers['host'] = request.headers.get('host') ?? new URL(request.url).host;
  headers['content-length'] = String(Buffer.byteLength(body));
  headers[FORWARDED_HEADER] = signForward(forwarding.key, forwarding.self, (forwarding.now ?? Date.now)(), body);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const outgoing = send(target, { method: 'POST', headers }, (incoming) => {
      // Connected: the answer may stream for as long as the call runs.
      outgoing.setTimeout(0);
      const answer = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (value === undefined || DROPPED.has(name)) continue;
        for (const item of Array.isArray(value) ? value : [value]) answer.append(name, item);
      }
      // The client's abort (it closed its stream) ends the forwarded request too.
      request.signal.addEventListener('abort', () => incoming.destroy(), { once: true });
      resolve(new Response(Readable.toWeb(incoming) as ReadableStream<Uint8Array>, { status: incoming.statusCode ?? 502, headers: answer }));
    });
    outgoing.once('error', () => resolve(undefined));
    outgoing.setTimeout(10_000, () => outgoing.destroy(new Error('the replica did not answer')));
    outgoing.end(body);
  });
}

/** Methods whose retry may resume a paused call. */
const RESUMABLE = new Set(['tools/call', 'prompts/get', 'resources/read']);

function refusal(status: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * Routes one 2026-07-28 POST: the owner's answer when it is a retry for a call another live
 * replica holds; a 403 when it claims to be forwarded and its signature does not hold; undefined
 * when this replica answers it (no state, a state of its own, a state it refuses, or the owner
 * gone: then the handler says the call ended).
 */
export async function routeRetry(forwarding: ReplicaForwarding, gateway: Pick<Gateway, 'foreignRoute'>, request: Request, identity: SessionIdentity): Promise<Response | undefined> {
  const header = request.headers.get(FORWARDED_HEADER);
  let body: string | undefined;
  if (header !== null) {
    body = await request.clone().text();
    const checked = checkForward(forwarding.key, header, body, (forwarding.now ?? Date.now)());
    // Signed by a replica: answered here whatever its state names (one hop, never a loop).
    return checked === 'valid' ? undefined : refusal(403, 'Forbidden: the forwarded request is not signed by a replica of this cluster');
  }
  body = await request.clone().text();
  if (!body.includes('"requestState"')) return undefined;
  let message: { method?: unknown; params?: unknown };
  try {
    message = JSON.parse(body) as { method?: unknown; params?: unknown };
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message) || typeof message.method !== 'string' || !RESUMABLE.has(message.method)) return undefined;
  if (typeof message.params !== 'object' || message.params === null) return undefined;
  const route = gateway.foreignRoute(identity, message.method, message.params as Record<string, unknown>);
  if (route === undefined) return undefined;
  const url = await forwarding.urlOf(route).catch(() => undefined);
  if (url === undefined) return undefined;
  return forwardTo(forwarding, request, body, url);
}
