/**
 * @module gateway/mrtr/request-state
 * The `requestState` Quiver hands a 2026-07-28 client with an `input_required` result (issue
 * #24; MCP basic/patterns/mrtr, server requirements 4–5: state that round-trips through the
 * client is attacker-controlled and MUST be integrity-protected). The state names a paused call
 * and its round, with an expiry, and is sealed with HMAC-SHA256 over the payload AND the
 * principal and the request it answers (method, target, arguments): a state minted for one
 * principal or one request fails the check for any other, and so does an altered or expired one.
 * The binding is inside the MAC, not in the state, so the state shows no identity. The key is
 * derived from the hub's secret key, so every replica that shares it can check a state.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a sealed state carries: which paused call, and which of its rounds the client answers. */
export interface ParkedCallState {
  /** The paused call's id (random, 128 bits). */
  call: string;
  /** The round this state was minted for: an answered round's state is not accepted twice. */
  round: number;
  /**
   * The replica that holds the paused call (its id in the replica table), so a retry that a load
   * balancer sends to another replica is forwarded there; absent on a single process.
   */
  replica?: string;
}

const KEY_BYTES = 32;
const PREFIX = 'q1.';

/**
 * The key requestStates are sealed with: derived (HKDF-SHA256) from the hub's secret key, so the
 * secret key itself never signs anything; a random per-process key when none is given (one
 * process only: another replica could not check its states).
 */
export function requestStateKey(secretKey: Uint8Array | undefined): Uint8Array {
  if (secretKey === undefined) return new Uint8Array(randomBytes(KEY_BYTES));
  return new Uint8Array(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'quiver mcp requestState v1', KEY_BYTES));
}

/** What a state is bound to: the principal and the request it answers. */
export interface StateBinding {
  principal: string;
  /** `requestTarget` of the request. */
  target: string;
}

/**
 * The method and target of a request (`tools/call` and `prompts/get` by name, `resources/read`
 * by URI) with its arguments: a retry repeats the request it answers (MRTR), so a state is bound
 * to all of it.
 */
export function requestTarget(method: string, params: { name?: unknown; uri?: unknown; arguments?: unknown }): string {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : '';
  return `${method}\0${name}\0${JSON.stringify(params.arguments ?? null)}`;
}

function mac(key: Uint8Array, body: string, binding: StateBinding): Buffer {
  return createHmac('sha256', key).update(`${body}\0${binding.principal}\0${binding.target}`).digest();
}

/** Seals a state for `binding`, valid until `expiresAt` (ms since the epoch). */
export function sealState(key: Uint8Array, state: ParkedCallState, binding: StateBinding, expiresAt: number): string {
  const body = PREFIX + Buffer.from(JSON.stringify({ c: state.call, r: state.round, e: expiresAt, ...(state.replica ? { o: state.replica } : {}) })).toString('base64url');
  return `${body}.${mac(key, body, binding).toString('base64url')}`;
}

/** Why a state was refused (never shown to the client beyond "invalid or expired"). */
export type StateRefusal = 'malformed' | 'mac' | 'expired';

/** Opens a state sealed for `binding`; a refusal when it is malformed, altered, bound elsewhere or expired. */
export function openState(key: Uint8Array, sealed: string, binding: StateBinding, now: number): ParkedCallState | { refused: StateRefusal } {
  const dot = sealed.lastIndexOf('.');
  if (!sealed.startsWith(PREFIX) || dot <= PREFIX.length || sealed.length > 1024) return { refused: 'malformed' };
  const body = sealed.slice(0, dot);
  const given = Buffer.from(sealed.slice(dot + 1), 'base64url');
  const expected = mac(key, body, binding);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'mac' };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return { refused: 'malformed' };
  }
  const { c, r, e, o } = (payload ?? {}) as { c?: unknown; r?: unknown; e?: unknown; o?: unknown };
  if (typeof c !== 'string' || typeof r !== 'number' || typeof e !== 'number' || (o !== undefined && typeof o !== 'string')) return { refused: 'malformed' };
  if (now >= e) return { refused: 'expired' };
  return { call: c, round: r, ...(o ? { replica: o } : {}) };
}

/**
 * The replica holding the paused call a retry resumes, when it is another one than this: the
 * request's `requestState` opened for this principal and request (so a forged, altered or expired
 * state is never forwarded), else undefined (the request is answered here, refusals included).
 * Here, not in `input-rounds.ts`, so the gateway checks a retry without loading the SDK v2 server.
 */
export function foreignRoute(inputRounds: { key: Uint8Array; now: () => number; replica?: string | undefined }, principal: string, method: string, params: { name?: unknown; uri?: unknown; arguments?: unknown; requestState?: unknown }): string | undefined {
  if (typeof params.requestState !== 'string') return undefined;
  const opened = openState(inputRounds.key, params.requestState, { principal, target: requestTarget(method, params) }, inputRounds.now());
  if ('refused' in opened || opened.replica === undefined || opened.replica === inputRounds.replica) return undefined;
  return opened.replica;
}
