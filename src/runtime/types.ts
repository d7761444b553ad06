/**
 * @module runtime/types
 * What the runtime is told about an upstream plugin server (`UpstreamSpec`), parsed with zod
 * because it is assembled from install records and plugin-authored PIDs. The execution
 * fields follow seed 000 §3.2.3 (ExecutionProfile), §3.2.4 (rateLimits) and §5.2
 * (CircuitBreakerConfig). Credentials arrive already decrypted in `env` / `headers`: the
 * runtime never logs them (see `redact.ts`).
 */
import { z } from 'zod';
import { parseOrThrow } from '../core/validation.ts';
import { containerSpecSchema } from './container-spec.ts';
import { hostMountSchema } from './host-mounts.ts';

/** Trust levels of seed 000 §4.1 (NEXUS_OFFICIAL is called OFFICIAL in Quiver). */
export const trustLevelSchema = z.enum(['UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL']);
export type TrustLevel = z.infer<typeof trustLevelSchema>;

/** Circuit breaker settings (seed 000 §5.2); `timeout` is the time spent open, in ms. */
export const circuitBreakerConfigSchema = z.object({
  failureThreshold: z.number().int().min(1).max(10_000).default(5),
  successThreshold: z.number().int().min(1).max(10_000).default(2),
  timeout: z.number().int().min(1).max(86_400_000).default(30_000),
  halfOpenRequests: z.number().int().min(1).max(10_000).default(1),
});
export type CircuitBreakerConfig = z.output<typeof circuitBreakerConfigSchema>;

/**
 * Failures a retry policy may name in `retryOn` (issue #29): the call timed out, the process was
 * gone or crashed, the plugin answered with a protocol error, or the tool answered `isError`.
 */
export const RETRY_CLASSES = ['timeout', 'unavailable', 'upstream_error', 'tool_error'] as const;
export type RetryClass = (typeof RETRY_CLASSES)[number];

/** Retry policy of seed 000 §3.2.3; `maxAttempts` counts the first attempt (1 = no retry). */
export const retryPolicySchema = z.object({
  maxAttempts: z.number().int().min(1).max(10).default(1),
  initialDelayMs: z.number().int().min(0).max(60_000).default(100),
  maxDelayMs: z.number().int().min(0).max(300_000).default(2_000),
  backoffMultiplier: z.number().min(1).max(10).default(2),
  /** Only these failures are retried; absent: timeouts, crashes and protocol errors (not tool errors). */
  retryOn: z.array(z.enum(RETRY_CLASSES)).min(1).optional(),
});
export type RetryPolicy = z.output<typeof retryPolicySchema>;

/** One token bucket: `requestsPerMinute` sustained, `burst` tokens at most (default: one second's worth, at least 1). */
export const bucketConfigSchema = z.object({
  requestsPerMinute: z.number().positive().max(6_000_000),
  burst: z.number().int().min(1).max(1_000_000).optional(),
});
export type BucketConfig = z.infer<typeof bucketConfigSchema>;

/** Rate limits (seed 000 §3.2.4): one bucket for the plugin, a default bucket per tool, per-tool overrides. */
export const rateLimitsSchema = z.object({
  plugin: bucketConfigSchema.optional(),
  perTool: bucketConfigSchema.optional(),
  tools: z.record(z.string(), bucketConfigSchema).default({}),
});
export type RateLimits = z.output<typeof rateLimitsSchema>;

/** Concurrency caps: calls in flight for the whole plugin, per tool by default, per named tool. */
export const concurrencySchema = z.object({
  plugin: z.number().int().min(1).max(10_000).optional(),
  perTool: z.number().int().min(1).max(10_000).optional(),
  tools: z.record(z.string(), z.number().int().min(1).max(10_000)).default({}),
  /** Calls allowed to wait for a slot before new ones are rejected. */
  maxQueue: z.number().int().min(0).max(100_000).default(1_000),
});
export type Concurrency = z.output<typeof concurrencySchema>;

/** Execution and safety settings taken from the plugin's PID (all optional). */
export const executionSchema = z.object({
  /** ms; the default call timeout for this plugin. */
  timeoutRecommendation: z.number().int().min(1).max(3_600_000).optional(),
  retryPolicy: retryPolicySchema.optional(),
  circuitBreakerConfig: circuitBreakerConfigSchema.optional(),
  rateLimits: rateLimitsSchema.optional(),
  concurrency: concurrencySchema.optional(),
});
export type Execution = z.output<typeof executionSchema>;

/** Resource limits for a plugin process; unset fields fall back to the isolation policy's. */
export const resourceLimitsSchema = z.object({
  memoryMb: z.number().int().min(16).max(1_048_576).optional(),
  cpus: z.number().positive().max(1_024).optional(),
  pids: z.number().int().min(8).max(1_000_000).optional(),
});
export type ResourceLimits = z.infer<typeof resourceLimitsSchema>;

const specBase = {
  pluginId: z.string().min(1).max(200),
  pluginName: z.string().min(1).max(200),
  version: z.string().min(1).max(200),
  trustLevel: trustLevelSchema,
  execution: executionSchema.default({}),
  /**
   * The protocol era the plugin is known to speak (issue #24): `legacy` (the 2025 `initialize`
   * handshake) or `modern` (2026-07-28, per-request `_meta`). Unset, the era is found by a
   * `server/discover` probe; the supervisor remembers what it found per plugin version.
   */
  protocolEra: z.enum(['legacy', 'modern']).optional(),
};

/** A plugin server run as a local process speaking MCP over stdio. */
export const stdioSpecSchema = z.object({
  ...specBase,
  transport: z.literal('stdio'),
  command: z.string().min(1).max(4_096),
  args: z.array(z.string().max(65_536)).max(1_000).default([]),
  /** Declared environment, credentials included (already decrypted). */
  env: z.record(z.string(), z.string()).default({}),
  /** The plugin folder: working directory, bound read-only into a sandbox. */
  cwd: z.string().min(1).optional(),
  /** Extra host paths the plugin may read (e.g. a shared node_modules); bound read-only. */
  readOnlyPaths: z.array(z.string().min(1)).max(100).default([]),
  /** Writable folder of the plugin; defaults to `<stateRoot>/<pluginId>`. */
  stateDir: z.string().min(1).optional(),
  /**
   * The plugin's install folder: in a sandbox it appears writable, its writes kept in the state
   * folder through an overlay (the folder itself never changes). Read-only when unset.
   */
  codeDir: z.string().min(1).optional(),
  limits: resourceLimitsSchema.default({}),
  /**
   * Host paths an admin granted (issue #26), bound at the same path in the sandbox, read-only or
   * read-write; never one of the hub's own paths (runtime/host-mounts.ts).
   */
  mounts: z.array(hostMountSchema).max(100).default([]),
  /**
   * Where a sandboxed plugin may connect (issue #10): set (even empty), the sandbox gets its own
   * network reaching only these through the egress proxy, every attempt logged; unset, a sandbox
   * has no network at all. `port` 0 is never allowed.
   */
  egress: z.array(z.object({ host: z.string().min(1).max(253), port: z.number().int().min(1).max(65_535) })).max(500).optional(),
  /** The plugin is this container image, run through docker or podman under the same rules (runtime/container.ts, issue #26). */
  container: containerSpecSchema.optional(),
});

/** A remote plugin reached over Streamable HTTP (with an SSE fallback). */
export const httpSpecSchema = z.object({
  ...specBase,
  transport: z.literal('http'),
  url: z.url(),
  /** Request headers, credentials included (already decrypted). */
  headers: z.record(z.string(), z.string()).default({}),
  /**
   * Whose OAuth authorization the connection carries (issue #27): an owner label such as
   * 'user:alice' or 'organisation:acme' when the admin set the server's authorizations per user
   * or organisation; absent, the hub's. Connections of different owners are never shared.
   */
  authorizationOwner: z.string().min(1).max(600).optional(),
});

/**
 * A REST API described by OpenAPI, served by an MCP server generated inside Quiver (issue #14,
 * `runtime/in-process.ts`): no third-party code runs, and the only egress is `baseUrl`'s host.
 */
export const openApiSpecSchema = z.object({
  ...specBase,
  transport: z.literal('openapi'),
  /** The pinned, bundled OpenAPI document (JSON; every `$ref` internal), an absolute path. */
  document: z.string().min(1).max(4_096),
  /** The API root every operation path is appended to. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** Credential values by secret name (already decrypted; names in `openapi/security.ts`). */
  env: z.record(z.string(), z.string()).default({}),
  /** Internal destinations (loopback, private…) an admin allowed it to reach (its egress rules; openapi/address-guard.ts). */
  allowInternal: z.array(z.object({ host: z.string().min(1).max(255), port: z.number().int().min(1).max(65_535) })).max(1_000).default([]),
});

/** What the runtime needs to reach one plugin version. */
export const upstreamSpecSchema = z.discriminatedUnion('transport', [stdioSpecSchema, httpSpecSchema, openApiSpecSchema]);
export type UpstreamSpec = z.output<typeof upstreamSpecSchema>;
export type UpstreamSpecInput = z.input<typeof upstreamSpecSchema>;
export type StdioSpec = z.output<typeof stdioSpecSchema>;
export type HttpSpec = z.output<typeof httpSpecSchema>;
export type OpenApiSpec = z.output<typeof openApiSpecSchema>;

/** Parses an upstream spec, throwing `invalid_input` listing every problem (values are never echoed). */
export function parseUpstreamSpec(input: unknown): UpstreamSpec {
  return parseOrThrow(upstreamSpecSchema, input, 'upstream spec');
}

/** A source of time, injected so that breakers, buckets and windows are testable. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** How one upstream call ended, for analytics and the bandit. */
export type CallOutcome = 'success' | 'error' | 'timeout' | 'rejected';

/** The event every upstream call produces (DESIGN §3.6; wired to analytics by the app). */
export interface CallEvent {
  pluginId: string;
  pluginName: string;
  version: string;
  tool: string;
  latencyMs: number;
  outcome: CallOutcome;
  /** Error code (`timeout`, `circuit_open`, `rate_limited`, `unavailable`, `tool_error`…). */
  errorClass?: string;
  attempts: number;
  at: Date;
}
