/**
 * @module runtime/era-probe
 * Which protocol era a stdio plugin speaks (MCP 2026-07-28, basic/versioning "Backward
 * Compatibility" and the stdio binding): before any client attaches, one `server/discover`
 * carrying the per-request `_meta` of the modern era is sent on the plugin's own pipe. A
 * `DiscoverResult` offering 2026-07-28 means a modern plugin; an `UnsupportedProtocolVersion`
 * (-32022) naming a modern version is also modern evidence (there is no other modern version to
 * retry with); any other error, or silence until `timeoutMs`, means a legacy plugin (the fallback
 * is not keyed to one error code, as the binding asks). A plugin that exits on the unknown
 * request is reported as `closed`: its process is spent, and the caller starts it again as
 * legacy (the v2 SDK probes on a disposable sibling process for the same reason).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** The one modern revision Quiver speaks to plugins. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** The `_meta` keys of the 2026-07-28 per-request envelope. */
export const ENVELOPE_KEYS = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
});

const PROBE_ID = 'quiver-era-probe';

/** A `DiscoverResult` as far as the era decision reads it (the rest passes through). */
export const discoverResultSchema = z.looseObject({
  supportedVersions: z.array(z.string()),
  capabilities: z.looseObject({}),
  instructions: z.string().optional(),
});

/** A validated `DiscoverResult`. */
export type DiscoverResult = z.infer<typeof discoverResultSchema>;

const unsupportedVersionSchema = z.object({ supported: z.array(z.string()) });

/** What the probe found. */
export type EraVerdict =
  | { kind: 'modern'; version: string; discover: DiscoverResult }
  | { kind: 'legacy'; why: string }
  /** The process ended during the probe: start it again and speak the legacy era to it. */
  | { kind: 'closed' }
  /** A modern plugin offering no version Quiver speaks: its own words, for the error. */
  | { kind: 'unsupported'; message: string; supported: string[] };

/** True for a revision of the stateless era (2026-07-28 and later: no `initialize`). */
export function isModernVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL_VERSION;
}

/** The per-request `_meta` envelope Quiver sends a modern plugin. */
export function envelopeOf(clientInfo: { name: string; version: string }, capabilities: object): Record<string, unknown> {
  return { [ENVELOPE_KEYS.protocolVersion]: MODERN_PROTOCOL_VERSION, [ENVELOPE_KEYS.clientInfo]: clientInfo, [ENVELOPE_KEYS.clientCapabilities]: capabilities };
}

/** Classifies the plugin's answer to the probe (pure). */
export function classifyProbeAnswer(message: { result?: unknown; error?: { code: number; message: string; data?: unknown } }): EraVerdict {
  if (message.error) {
    const { code, data } = message.error;
    const supported = unsupportedVersionSchema.safeParse(data);
    if (code === -32022 && supported.success) {
      if (supported.data.supported.includes(MODERN_PROTOCOL_VERSION)) {
        // It refused the version Quiver asked for yet lists it: nothing to retry with that would differ.
        return { kind: 'unsupported', message: message.error.message, supported: supported.data.supported };
      }
      if (supported.data.supported.some(isModernVersion)) return { kind: 'unsupported', message: message.error.message, supported: supported.data.supported };
      return { kind: 'legacy', why: `server/discover: ${message.error.message}` };
    }
    return { kind: 'legacy', why: `server/discover answered ${code}: ${message.error.message}` };
  }
  const discover = discoverResultSchema.safeParse(message.result);
  if (!discover.success) return { kind: 'legacy', why: 'server/discover answered with something that is not a DiscoverResult' };
  if (!discover.data.supportedVersions.includes(MODERN_PROTOCOL_VERSION)) {
    const modern = discover.data.supportedVersions.filter(isModernVersion);
    if (modern.length > 0) return { kind: 'unsupported', message: 'no protocol version in common', supported: discover.data.supportedVersions };
    return { kind: 'legacy', why: 'server/discover offered no modern version' };
  }
  return { kind: 'modern', version: MODERN_PROTOCOL_VERSION, discover: discover.data };
}

/**
 * Sends the probe on `transport` (started here; its handlers are the probe's until it settles,
 * then cleared for the client that attaches next) and classifies the answer.
 */
export async function probeEra(
  transport: Transport,
  options: { clientInfo: { name: string; version: string }; capabilities: object; timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<EraVerdict> {
  let settle: (verdict: EraVerdict) => void = () => undefined;
  const answered = new Promise<EraVerdict>((resolve) => (settle = resolve));
  transport.onmessage = (message: JSONRPCMessage) => {
    if (!('id' in message) || message.id !== PROBE_ID || 'method' in message) return;
    settle(classifyProbeAnswer(message as { result?: unknown; error?: { code: number; message: string; data?: unknown } }));
  };
  transport.onclose = () => settle({ kind: 'closed' });
  transport.onerror = () => undefined;
  const timer = setTimeout(() => settle({ kind: 'legacy', why: `no answer to server/discover within ${options.timeoutMs} ms` }), options.timeoutMs);
  const onAbort = (): void => settle({ kind: 'closed' });
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await transport.start();
    await transport.send({
      jsonrpc: '2.0',
      id: PROBE_ID,
      method: 'server/discover',
      params: { _meta: envelopeOf(options.clientInfo, options.capabilities) },
    } as JSONRPCMessage);
    return await answered;
  } catch {
    // The process could not take the request (its stdin closed): it is gone.
    return { kind: 'closed' };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    transport.onmessage = undefined;
    transport.onclose = undefined;
    transport.onerror = undefined;
  }
}
