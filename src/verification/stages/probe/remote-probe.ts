/**
 * @module verification/stages/probe/remote-probe
 * The probe of a remote plugin (Streamable HTTP, SSE fallback): it runs on someone else's
 * machine, so there is no sandbox to watch — no resources, network or writes — but the MCP
 * contract is the same, and the compatibility stage judges it from the same listing and calls
 * (reads and bad-argument calls, by the same rule). The sandbox-execution stage sees
 * `remote: true` and scores what it cannot observe accordingly. An OpenAPI plugin (issue #14)
 * is probed the same way: its generated server runs in Quiver, the API it calls elsewhere.
 */
import type { ModernUpstreamClient } from '../../../runtime/modern-client.ts';
import { redactorForSpec } from '../../../runtime/redact.ts';
import { httpSpecSchema, openApiSpecSchema, systemClock, type UpstreamSpecInput } from '../../../runtime/types.ts';
import type { ProbeTarget } from './exercise.ts';

/** A connected remote plugin, as the exercise phase uses it, and how to close it. */
export interface RemoteTarget extends ProbeTarget {
  close(): Promise<void>;
}

/** Connects to a remote plugin (handshake within `startTimeoutMs`); throws when it cannot. */
export async function connectRemote(launch: UpstreamSpecInput & { transport: 'http' | 'openapi' }, startTimeoutMs: number, signal: AbortSignal | undefined, remoteFetch?: typeof fetch): Promise<RemoteTarget> {
  const spec = launch.transport === 'openapi' ? openApiSpecSchema.parse(launch) : httpSpecSchema.parse(launch);
  const options = { startTimeoutMs, redact: redactorForSpec(spec), clock: systemClock, ...(signal ? { signal } : {}), ...(remoteFetch ? { fetch: remoteFetch } : {}) };
  // The MCP client stacks load with the first probe (issue #28: an idle server makes none).
  const connection = spec.transport === 'openapi' ? await (await import('../../../runtime/in-process.ts')).connectOpenApi(spec, options) : await (await import('../../../runtime/upstream-client.ts')).connectHttp(spec, options);
  const ended = new Promise<string>((resolve) => connection.onEnd((end) => (end.requested ? undefined : resolve(end.reason))));
  // The SDK's HTTP transports keep the version the client settled on in `initialize`; a
  // 2026-07-28 plugin has none, and the v2 client keeps the version it negotiated (issue #24).
  const transport = connection.client.transport as { protocolVersion?: unknown } | undefined;
  const version = connection.era === 'modern' ? (connection.client as ModernUpstreamClient).protocolVersion : transport?.protocolVersion;
  return {
    client: connection.client,
    protocolVersion: typeof version === 'string' ? version : undefined,
    ended,
    isRunning: () => connection.isOpen(),
    close: () => connection.close(),
  };
}
