/**
 * @module config
 * The one place that reads the environment. `loadConfig(env, overrides)` validates, freezes
 * and fails fast with a message naming the variable; everything else takes options.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { QuiverError, ErrorCodes } from './core/errors.ts';
import { formatIssues } from './core/validation.ts';
import { parseAddressList } from './core/address-list.ts';
import type { StoreLocation } from './store/location.ts';
import { locateStore } from './config-location.ts';
import { DEFAULT_PORT } from './core/bind-host.ts';

// Kept apart so the command list loads without this module's schemas (issue #28).
export { DEFAULT_PORT, isPublicBindHost } from './core/bind-host.ts';

const logLevels = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** Validated, frozen configuration. */
export interface QuiverConfig {
  /** Where the catalog lives (PostgreSQL URL, memory, or a PGlite folder). */
  store: StoreLocation;
  /** PostgreSQL connections per process, the LISTEN connection included (QUIVER_DATABASE_POOL_SIZE, default 10; docs/scale-out.md). */
  databasePoolSize: number;
  /** Folder for Quiver's own files (plugin cache, key file) when running embedded. */
  homeDir: string;
  /**
   * The HTTP server (issue #23): header and whole-request read timeouts
   * (`QUIVER_HTTP_HEADERS_TIMEOUT_MS`, default 20,000; `QUIVER_HTTP_REQUEST_TIMEOUT_MS`, default
   * 60,000, at least the header timeout) and connections open at once per client address
   * (`QUIVER_HTTP_MAX_CONNECTIONS_PER_CLIENT`, default 1024, 0 = no cap).
   */
  http: { host: string; port: number; allowAllInterfaces: boolean; headersTimeoutMs: number; requestTimeoutMs: number; maxConnectionsPerClient: number };
  /** The built-in authorization server (issue #27, `QUIVER_AUTH_*`, docs/authorization.md). */
  authServer: AuthServerConfig;
  /**
   * Proxies whose X-Forwarded-For / -Proto / -Host are believed (QUIVER_TRUST_PROXY: loopback,
   * private, IP addresses, CIDRs; issue #27); default none: the headers are ignored.
   */
  trustProxy?: string | undefined;
  logLevel: (typeof logLevels)[number];
  /** 32-byte key for secrets at rest, if given (else a generated key file is used). */
  secretKey: string | undefined;
  /** Where QUIVER_SECRET_KEY_FILE keeps the key, when it does: hidden from plugins like the home (issue #26). */
  secretKeyFile: string | undefined;
  dangerouslyAllowUnsandboxed: boolean;
  embedder:
    | { kind: 'offline' }
    | { kind: 'table'; tablePath: string | undefined }
    | { kind: 'model'; modelPath: string | undefined }
    | { kind: 'local'; modelPath: string }
    | { kind: 'openai'; baseUrl: string; model: string; apiKey: string | undefined; dimensions: number | undefined };
  /**
   * Tool embeddings: computed in the background after catalog writes (`QUIVER_EMBEDDINGS=background`,
   * the default) or only on `quiver embeddings recompute` (`manual`); a sweep every `sweepIntervalMs`
   * (`QUIVER_EMBEDDINGS_SWEEP_MS`, 0 = off; the periodic job `embeddings.sweep`, one replica at a
   * time) catches writes of other processes.
   */
  embeddings: { background: boolean; sweepIntervalMs: number };
  /** Metrics, traces and shutdown draining (issue #16, docs/scale-out.md). */
  telemetry: TelemetryConfig;
  /**
   * LLM enrichment of generated intelligence documents (issue #14, `quiver pid generate --from llm`):
   * any OpenAI-compatible chat endpoint (`QUIVER_LLM_BASE_URL`, `QUIVER_LLM_MODEL`, `QUIVER_LLM_API_KEY`
   * or `_FILE`), per-call timeout, and optional USD prices per million input / output tokens for the
   * cost report. Undefined when no endpoint is configured.
   */
  llm?: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number; priceInputPerMillion: number | undefined; priceOutputPerMillion: number | undefined } | undefined;
  /**
   * The environment commands Quiver runs for installs inherit (git, npm, package managers): the
   * one `loadConfig` was given, so the machine's proxies, CA files and npm settings apply.
   */
  commandEnv: Readonly<Record<string, string | undefined>>;
  /**
   * Intervals and bounds an operator may tune: idle plugin pings (`QUIVER_PLUGIN_PING_INTERVAL_MS`,
   * 0 = off), call-event retention (`QUIVER_CALL_EVENTS_RETENTION_DAYS`, 0 = keep), how long a
   * verified API key is reused while revocations are heard (`QUIVER_API_KEY_CACHE_MS`), and the
   * install steps' time limits (`QUIVER_DISCOVERY_TIMEOUT_MS`, `QUIVER_GIT_TIMEOUT_MS`,
   * `QUIVER_NPM_TIMEOUT_MS`, `QUIVER_BUILD_TIMEOUT_MS`).
   */
  timing: {
    /**
     * Processes per plugin the supervisor may run (`QUIVER_PLUGIN_POOL_SIZE`, 1–8): more let
     * sessions whose clients answer sampling or elicitation run at once, each on its own.
     */
    pluginPoolSize: number;
    pluginPingIntervalMs: number;
    callEventRetentionDays: number;
    apiKeyCacheMs: number;
    discoveryTimeoutMs: number;
    gitTimeoutMs: number;
    npmTimeoutMs: number;
    buildTimeoutMs: number;
  };
  /** Verification of installed plugins and the job worker that runs it (issue #10). */
  verification: VerificationConfig;
  /** MCP gateway limits (issue #18): sessions per tenant and in all, idle expiry, bounded work. */
  mcp: McpLimits;
  /** Dynamic trust and the egress decision log (issue #10): `QUIVER_TRUST_*`. */
  trust: TrustConfig;
  /** Learned example queries (issue #13, DESIGN §3.10): selection/learning. */
  learning: LearningConfig;
  /** Blue-green upgrades (issue #11, seed 000 §5): rollout steps, windows and rollback thresholds (`QUIVER_ROLLOUT_*`). */
  rollouts: RolloutConfig;
  /** Access tokens of an external authorization server beside API keys (issue #27); undefined: API keys only. */
  oauth?: OAuthConfig | undefined;
  /** Quiver as an OAuth client of remote plugins (issue #27): `QUIVER_REMOTE_OAUTH_*`, `QUIVER_PUBLIC_URL`. */
  remoteOAuth?: RemoteOAuthConfig | undefined;
}

/** Quiver as an OAuth client of remote plugins (docs/authorization.md). */
export interface RemoteOAuthConfig {
  /**
   * Non-public addresses remote plugins' MCP URLs and their OAuth requests may reach
   * (QUIVER_REMOTE_ALLOW_ADDRESSES, or its older name QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: loopback,
   * private, link-local, CIDRs; both set: both admitted); default none.
   */
  allowAddresses?: string | undefined;
  /** Quiver's public https base URL (QUIVER_PUBLIC_URL): its Client ID Metadata Document is served under it. */
  publicUrl?: string | undefined;
}

/** Rollout steps, monitoring window and automatic-rollback thresholds (`QUIVER_ROLLOUT_*`, docs/rollouts.md). */
export interface RolloutConfig {
  /** Canary traffic per step, percent, ending at 100 (QUIVER_ROLLOUT_STEPS, default 10,50,100). */
  steps: number[];
  /** How long each step is monitored before the next, ms (QUIVER_ROLLOUT_STEP_WINDOW_MS, default 300,000: seed 000 §5.1). */
  stepWindowMs: number;
  /**
   * When above 0, a step the canary is judged healthy in ends once the canary has answered this
   * many calls since the step began, not after `stepWindowMs` (QUIVER_ROLLOUT_STEP_CALLS, default
   * 0: time). A canary too quiet to judge still moves on after twice `stepWindowMs`.
   */
  stepCalls: number;
  /** Canary calls needed before error rate and latency are judged (QUIVER_ROLLOUT_MIN_SAMPLES, default 20). */
  minSamples: number;
  /** Roll back when the canary's error rate exceeds the stable slot's by more than this (QUIVER_ROLLOUT_MAX_ERROR_RATE_DELTA, default 0.1). */
  maxErrorRateDelta: number;
  /** Roll back when the canary's p95 latency exceeds this multiple of the stable slot's (QUIVER_ROLLOUT_MAX_P95_RATIO, default 2)… */
  maxP95Ratio: number;
  /** …and is also this much slower in absolute terms, ms (QUIVER_ROLLOUT_MIN_P95_DELTA_MS, default 100). */
  minP95DeltaMs: number;
  /** How often a server checks running rollouts, ms (QUIVER_ROLLOUT_TICK_MS, default 1,000). */
  tickMs: number;
  /** Rollbacks of the same version before it is queued for re-verification (QUIVER_ROLLOUT_REVERIFY_AFTER, default 2). */
  reverifyAfter: number;
  /** An idle or failed slot keeps its install folder this long after it left service, ms (QUIVER_ROLLOUT_FOLDER_RETENTION_MS, default 7 days; issue #29). */
  folderRetentionMs: number;
  /** A version called within this window keeps its folder, ms (QUIVER_ROLLOUT_RECENT_CALL_MS, default 900,000). */
  recentCallMs: number;
  /** How often the folder sweep runs, ms; 0 turns it off (QUIVER_ROLLOUT_SWEEP_INTERVAL_MS, default 3,600,000). */
  sweepIntervalMs: number;
}

/** Learned example queries: on or off, caps and retention (`QUIVER_LEARNING_*`). */
export interface LearningConfig {
  /** Learn from successful calls (QUIVER_LEARNING_ENABLED, default on; `0`/`false`/`no` turn it off). */
  enabled: boolean;
  /** Examples kept per tool and organisation, least recently seen evicted first (QUIVER_LEARNING_PER_TOOL_CAP, default 50). */
  perToolCap: number;
  /** Largest share of a tool's examples, and of its learned boost, one user or session may give (QUIVER_LEARNING_CONTRIBUTOR_SHARE, default 0.34). */
  contributorShare: number;
  /** Examples not seen for this many days are deleted; 0 keeps them (QUIVER_LEARNING_RETENTION_DAYS, default 90). */
  retentionDays: number;
}

/** Verification (seed 000 §4.2) and the background job worker (`QUIVER_VERIFY_*`, `QUIVER_JOBS_POLL_MS`). */
export interface VerificationConfig {
  /** Verify after every install and update in the background (QUIVER_VERIFY_ON_INSTALL=background, the default) or not (`off`). */
  onInstall: 'background' | 'off';
  /** How often an idle job worker looks for queued jobs, ms (QUIVER_JOBS_POLL_MS, default 1,000). */
  jobsPollMs: number;
  /** Lease of a claimed job, ms: how long a dead replica's job waits before another takes it over (QUIVER_JOBS_LEASE_MS, default 30,000). */
  jobsLeaseMs: number;
  /** Time limit of one verification stage, ms (QUIVER_VERIFY_STAGE_TIMEOUT_MS, default 120,000). */
  stageTimeoutMs: number;
  /** npm registry for provenance and advisories (QUIVER_VERIFY_REGISTRY_URL, else npm_config_registry, else registry.npmjs.org). */
  registryUrl: string;
  /** SPDX licence ids accepted without an issue (QUIVER_VERIFY_LICENSES, comma-separated; default the common permissive ones). */
  licenseAllowList: string[];
}

/** Licences accepted by default: permissive ones. */
export const DEFAULT_LICENSE_ALLOW_LIST = ['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'Unlicense', 'CC0-1.0', 'BlueOak-1.0.0', 'Python-2.0'];

/** Dynamic trust (seed 000 §4.3) and the egress decision log (`QUIVER_TRUST_*`). */
export interface TrustConfig {
  /** A runtime trust score below this lowers a plugin one level at its next start (QUIVER_TRUST_RUNTIME_THRESHOLD, 0–100, default 50). */
  runtimeThreshold: number;
  /** Hours of behaviour the runtime score reads (QUIVER_TRUST_WINDOW_HOURS, default 24). */
  windowHours: number;
  /** Calls in the window before error rate and latency variance count (QUIVER_TRUST_MIN_CALLS, default 10). */
  minCalls: number;
  /** How often every plugin's runtime trust is recomputed, ms; 0: on demand only (QUIVER_TRUST_EVALUATE_INTERVAL_MS, default 300,000). */
  evaluateIntervalMs: number;
  /** Days egress decisions are kept (QUIVER_TRUST_EGRESS_LOG_DAYS, default 14). */
  egressLogDays: number;
}

/** Session and load limits of the MCP gateway. */
export interface McpLimits {
  /** Most live sessions in all; beyond it new sessions get 503 (QUIVER_MCP_MAX_SESSIONS, default 1,000). */
  maxSessions: number;
  /** Most live sessions per API key (QUIVER_MCP_MAX_SESSIONS_PER_KEY, default 100). */
  maxSessionsPerKey: number;
  /** Most live sessions per organisation (QUIVER_MCP_MAX_SESSIONS_PER_ORG, default 250). */
  maxSessionsPerOrg: number;
  /** Idle sessions close after this long, ms (QUIVER_MCP_SESSION_IDLE_SECONDS, default 300 s). */
  sessionIdleTtlMs: number;
  /** Searches running at once (QUIVER_MCP_MAX_CONCURRENT_SEARCHES, default 64). */
  maxConcurrentSearches: number;
  /** Searches waiting for a slot; beyond it 503 (QUIVER_MCP_MAX_QUEUED_SEARCHES, default 1,024). */
  maxQueuedSearches: number;
  /** Longest a search waits for a slot before it is refused, ms (QUIVER_MCP_MAX_WAIT_MS, default 5,000). */
  maxWaitMs: number;
  /** Where `/mcp` sessions live: `database` (any replica serves them, the default) or `memory` (this process only) (QUIVER_MCP_SESSIONS). */
  sessionStore: 'database' | 'memory';
}

/** An organisation admitted to Quiver through access tokens (QUIVER_OAUTH_ORGS, issue #27). */
const admittedOrganisationSchema = z
  .object({
    org: z.string().min(1).max(200).optional(),
    // Never `admin`: administration stays with API keys.
    scopes: z.array(z.enum(['mcp', 'read', 'select', 'metrics'])).min(1).default(['mcp']),
    roles: z.array(z.string().min(1).max(100)).max(50).default([]),
    tier: z.string().min(1).max(100).optional(),
    workspaceId: z.string().uuid().optional(),
  })
  .strict();

/**
 * Quiver as an OAuth protected resource (issue #27, docs/authorization.md): access tokens of one
 * external authorization server (`QUIVER_OAUTH_ISSUER`), for the resource `QUIVER_OAUTH_RESOURCE`
 * (default: the `/mcp` URL of a loopback request), mapped onto organisations, users and roles by
 * the claims named here and the admitted organisations of `QUIVER_OAUTH_ORGS` (JSON, or `_FILE`).
 */
export interface OAuthConfig {
  issuer: string;
  resource: string | undefined;
  jwksUrl: string | undefined;
  clockToleranceSeconds: number;
  scopesSupported: string[];
  orgClaim: string;
  userClaim: string;
  rolesClaim: string;
  organisations: Record<string, z.output<typeof admittedOrganisationSchema>>;
}

/**
 * The built-in authorization server (issue #27): `auto` (the default) runs it when `quiver serve`
 * binds a loopback address and no external issuer is configured; `on` runs it on any bind (then
 * `QUIVER_AUTH_ISSUER` names the public origin, unless loopback); `off` never.
 */
export interface AuthServerConfig {
  mode: 'auto' | 'on' | 'off';
  /** The issuer identifier: Quiver's public origin (`https://quiver.example.com`); default `http://<bind host>:<port>`. */
  issuer: string | undefined;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Tests only (`QUIVER_AUTH_TEST_PRIVATE_CLIENT_METADATA=1`): fetch Client ID Metadata Documents from loopback and private addresses. */
  allowPrivateClientMetadata: boolean;
}

/** Settings given on the command line, which win over the environment. */
export interface ConfigOverrides {
  dataDir?: string | undefined;
  databaseUrl?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  allowAllInterfaces?: boolean | undefined;
  logLevel?: string | undefined;
  /** Level when neither the flag nor QUIVER_LOG_LEVEL sets one (servers log info, one-shot commands warn). */
  defaultLogLevel?: string | undefined;
}

type Env = Record<string, string | undefined>;

/** Facts about the process that shape defaults (kept out of the environment so tests can set them). */
export interface ProcessFacts {
  /** Effective user id; root's default home is /var/lib/quiver, reachable by sandboxed plugins. */
  uid?: number | undefined;
}

/** Reads `NAME`, or the file named by `NAME_FILE` (for secrets), trimming a trailing newline. */
function readSecret(env: Env, name: string): string | undefined {
  const direct = env[name];
  if (direct) return direct;
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new QuiverError(ErrorCodes.config, `cannot read ${name}_FILE (${file}): ${(error as Error).message}`);
  }
}

const boolish = z
  .string()
  .optional()
  .transform((value) => value === '1' || value === 'true' || value === 'yes');

const envSchema = z.object({
  QUIVER_HOME: z.string().optional(),
  QUIVER_DATA_DIR: z.string().optional(),
  QUIVER_DATABASE_URL: z.string().regex(/^(postgres(ql)?:\/\/|memory:\/\/)/, 'must start with postgres:// or be memory://').optional(),
  QUIVER_HOST: z.string().optional(),
  QUIVER_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  QUIVER_HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  QUIVER_HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  QUIVER_HTTP_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(0).max(1_000_000).default(1024),
  QUIVER_LOG_LEVEL: z.enum(logLevels).optional(),
  QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED: boolish,
  QUIVER_EMBEDDER: z.enum(['table', 'model', 'offline', 'local', 'openai']).optional(),
  QUIVER_EMBEDDER_MODEL_PATH: z.string().optional(),
  QUIVER_EMBEDDER_BASE_URL: z.string().url().optional(),
  QUIVER_EMBEDDER_MODEL: z.string().optional(),
  QUIVER_EMBEDDER_DIMENSIONS: z.coerce.number().int().positive().optional(),
  QUIVER_EMBEDDINGS: z.enum(['background', 'manual']).optional(),
  QUIVER_LLM_BASE_URL: z.string().url().optional(),
  QUIVER_LLM_MODEL: z.string().min(1).optional(),
  QUIVER_LLM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(60_000),
  QUIVER_LLM_PRICE_INPUT: z.coerce.number().min(0).optional(),
  QUIVER_LLM_PRICE_OUTPUT: z.coerce.number().min(0).optional(),
  QUIVER_METRICS: z.enum(['key', 'open', 'off']).default('key'),
  QUIVER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false', '1', '0']).optional(),
  QUIVER_TRACE_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(1),
  QUIVER_SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(300).default(0),
  QUIVER_DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(1000).default(10),
  QUIVER_PLUGIN_POOL_SIZE: z.coerce.number().int().min(1).max(8).default(1),
  QUIVER_PLUGIN_PING_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  QUIVER_CALL_EVENTS_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  QUIVER_API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  QUIVER_DISCOVERY_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(30_000),
  QUIVER_GIT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  QUIVER_NPM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(7_200_000).default(300_000),
  QUIVER_BUILD_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(7_200_000).default(300_000),
  QUIVER_EMBEDDINGS_SWEEP_MS: z.coerce.number().int().min(0).max(86_400_000).optional(),
  QUIVER_MCP_MAX_SESSIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  QUIVER_MCP_MAX_SESSIONS_PER_KEY: z.coerce.number().int().min(1).max(1_000_000).default(100),
  QUIVER_MCP_MAX_SESSIONS_PER_ORG: z.coerce.number().int().min(1).max(1_000_000).default(250),
  QUIVER_MCP_SESSION_IDLE_SECONDS: z.coerce.number().int().min(1).max(7 * 86_400).default(300),
  QUIVER_MCP_MAX_CONCURRENT_SEARCHES: z.coerce.number().int().min(1).max(100_000).default(64),
  QUIVER_MCP_MAX_QUEUED_SEARCHES: z.coerce.number().int().min(0).max(1_000_000).default(1024),
  QUIVER_MCP_MAX_WAIT_MS: z.coerce.number().int().min(1).max(600_000).default(5000),
  QUIVER_TRUST_RUNTIME_THRESHOLD: z.coerce.number().int().min(0).max(100).default(50),
  QUIVER_TRUST_WINDOW_HOURS: z.coerce.number().positive().max(24 * 365).default(24),
  QUIVER_TRUST_MIN_CALLS: z.coerce.number().int().min(1).max(1_000_000).default(10),
  QUIVER_TRUST_EVALUATE_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(300_000),
  QUIVER_TRUST_EGRESS_LOG_DAYS: z.coerce.number().int().min(1).max(3650).default(14),
  QUIVER_LEARNING_ENABLED: z.enum(['0', '1', 'true', 'false', 'yes', 'no']).optional(),
  QUIVER_LEARNING_PER_TOOL_CAP: z.coerce.number().int().min(1).max(10_000).default(50),
  QUIVER_LEARNING_CONTRIBUTOR_SHARE: z.coerce.number().gt(0).max(1).default(0.34),
  QUIVER_LEARNING_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
  QUIVER_VERIFY_ON_INSTALL: z.enum(['background', 'off']).default('background'),
  QUIVER_JOBS_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1000),
  QUIVER_JOBS_LEASE_MS: z.coerce.number().int().min(300).max(3_600_000).default(30_000),
  QUIVER_MCP_SESSIONS: z.enum(['database', 'memory']).default('database'),
  QUIVER_VERIFY_STAGE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  QUIVER_VERIFY_REGISTRY_URL: z.string().url().optional(),
  QUIVER_VERIFY_LICENSES: z.string().optional(),
  QUIVER_ROLLOUT_STEPS: z
    .string()
    .regex(/^\s*\d{1,3}(\s*,\s*\d{1,3})*\s*$/, 'comma-separated percents, e.g. 10,50,100')
    .transform((text) => text.split(',').map((part) => Number(part.trim())))
    .refine((steps) => steps.every((step, index) => step >= 1 && step <= 100 && (index === 0 || step > steps[index - 1]!)) && steps.at(-1) === 100, 'rising percents from 1 to 100, ending at 100')
    .default([10, 50, 100]),
  QUIVER_ROLLOUT_STEP_WINDOW_MS: z.coerce.number().int().min(0).max(86_400_000).default(300_000),
  QUIVER_ROLLOUT_STEP_CALLS: z.coerce.number().int().min(0).max(1_000_000).default(0),
  QUIVER_ROLLOUT_MIN_SAMPLES: z.coerce.number().int().min(1).max(1_000_000).default(20),
  QUIVER_ROLLOUT_MAX_ERROR_RATE_DELTA: z.coerce.number().min(0).max(1).default(0.1),
  QUIVER_ROLLOUT_MAX_P95_RATIO: z.coerce.number().min(1).max(1000).default(2),
  QUIVER_ROLLOUT_MIN_P95_DELTA_MS: z.coerce.number().min(0).max(600_000).default(100),
  QUIVER_ROLLOUT_TICK_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
  QUIVER_ROLLOUT_REVERIFY_AFTER: z.coerce.number().int().min(1).max(1000).default(2),
  QUIVER_ROLLOUT_FOLDER_RETENTION_MS: z.coerce.number().int().min(0).max(31_536_000_000).default(604_800_000),
  QUIVER_ROLLOUT_RECENT_CALL_MS: z.coerce.number().int().min(0).max(86_400_000).default(900_000),
  QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400_000)
    .refine((value) => value === 0 || value >= 1000, 'expected 0 (no sweep) or at least 1000 ms')
    .default(3_600_000),
  QUIVER_OAUTH_ISSUER: z.string().url().optional(),
  QUIVER_REMOTE_ALLOW_ADDRESSES: z.string().max(2000).optional(),
  QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: z.string().max(2000).optional(),
  QUIVER_PUBLIC_URL: z.string().url().refine((text) => /^https?:\/\//.test(text) && !text.includes('#') && !text.includes('?'), 'an http(s) URL without query or fragment').optional(),
  QUIVER_OAUTH_RESOURCE: z.string().url().optional(),
  QUIVER_OAUTH_JWKS_URL: z.string().url().optional(),
  QUIVER_OAUTH_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  QUIVER_OAUTH_SCOPES: z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, 'space-separated scope tokens (RFC 6749 §3.3)').default('mcp'),
  QUIVER_OAUTH_ORG_CLAIM: z.string().min(1).max(200).default('org'),
  QUIVER_OAUTH_USER_CLAIM: z.string().min(1).max(200).default('sub'),
  QUIVER_OAUTH_ROLES_CLAIM: z.string().min(1).max(200).default('groups'),
  QUIVER_AUTH_SERVER: z.enum(['auto', 'on', 'off']).default('auto'),
  QUIVER_TRUST_PROXY: z.string().max(2000).optional(),
  QUIVER_AUTH_ISSUER: z
    .string()
    .url()
    .refine((text) => { const url = new URL(text); return /^https?:$/.test(url.protocol) && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash; }, 'an http(s) origin without path, query or fragment (https://quiver.example.com)')
    .transform((text) => new URL(text).origin)
    .optional(),
  QUIVER_AUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(3600),
  QUIVER_AUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(365 * 86_400).default(30 * 86_400),
  QUIVER_AUTH_TEST_PRIVATE_CLIENT_METADATA: z.enum(['0', '1']).default('0'),
});

/** The OAuth settings, or undefined when no issuer is configured; fails fast on a bad organisation map. */
function oauthConfig(values: z.output<typeof envSchema>, env: Env): OAuthConfig | undefined {
  const organisationsText = readSecret(env, 'QUIVER_OAUTH_ORGS');
  if (values.QUIVER_OAUTH_ISSUER === undefined) {
    if (organisationsText !== undefined || values.QUIVER_OAUTH_RESOURCE !== undefined) {
      throw new QuiverError(ErrorCodes.config, 'QUIVER_OAUTH_ORGS and QUIVER_OAUTH_RESOURCE need QUIVER_OAUTH_ISSUER (the authorization server)');
    }
    return undefined;
  }
  if (organisationsText === undefined) {
    throw new QuiverError(ErrorCodes.config, 'QUIVER_OAUTH_ISSUER needs QUIVER_OAUTH_ORGS: the organisations whose tokens are admitted, e.g. {"acme":{"scopes":["mcp"]}}');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(organisationsText) as unknown;
  } catch {
    throw new QuiverError(ErrorCodes.config, 'QUIVER_OAUTH_ORGS is not valid JSON');
  }
  const parsed = z.record(z.string().min(1).max(200), admittedOrganisationSchema).safeParse(raw);
  if (!parsed.success) {
    throw new QuiverError(ErrorCodes.config, `QUIVER_OAUTH_ORGS: ${formatIssues(parsed.error).map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
  if (Object.keys(parsed.data).length === 0) throw new QuiverError(ErrorCodes.config, 'QUIVER_OAUTH_ORGS admits no organisation');
  if (values.QUIVER_OAUTH_RESOURCE !== undefined && new URL(values.QUIVER_OAUTH_RESOURCE).hash !== '') {
    throw new QuiverError(ErrorCodes.config, 'QUIVER_OAUTH_RESOURCE must not have a fragment (RFC 8707 §2)');
  }
  return {
    issuer: values.QUIVER_OAUTH_ISSUER,
    resource: values.QUIVER_OAUTH_RESOURCE,
    jwksUrl: values.QUIVER_OAUTH_JWKS_URL,
    clockToleranceSeconds: values.QUIVER_OAUTH_CLOCK_TOLERANCE_SECONDS,
    scopesSupported: values.QUIVER_OAUTH_SCOPES.split(' '),
    orgClaim: values.QUIVER_OAUTH_ORG_CLAIM,
    userClaim: values.QUIVER_OAUTH_USER_CLAIM,
    rolesClaim: values.QUIVER_OAUTH_ROLES_CLAIM,
    organisations: parsed.data,
  };
}

// The embedder when QUIVER_EMBEDDER is unset (issue #25): the static token table distilled from
// the shipped model, which embeds a query in well under a millisecond (hashed-like cost) and
// ranks above the hashed embedder on MetaTool (docs/retrieval.md). The model itself (QUIVER_EMBEDDER=model) ranks
// better still but costs a model inference per new query (p50 20–66 ms measured on this 2-core
// machine) and would break `quiver eval`'s contract (5,000 queries over 5,000 tools well under a
// minute); docs/retrieval.md has the side-by-side figures. The test runner's preload
// (test/setup/cheap-embedder.ts) pins 'offline' here, so the suite stays on the cheapest one.
let defaultEmbedderKind: 'table' | 'model' | 'offline' = 'table';

/** Sets the embedder used when QUIVER_EMBEDDER is unset (the test runner's preload sets 'offline'). */
export function setDefaultEmbedderKind(kind: 'table' | 'model' | 'offline'): void {
  defaultEmbedderKind = kind;
}

/** Builds the configuration from the environment and command-line overrides. */
export function loadConfig(env: Env, overrides: ConfigOverrides = {}, facts: ProcessFacts = {}): QuiverConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new QuiverError(ErrorCodes.config, `invalid environment: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      details: { issues },
    });
  }
  const values = parsed.data;
  // Address lists are checked at load, not when the part that reads them first starts (issue #27).
  for (const setting of ['QUIVER_TRUST_PROXY', 'QUIVER_REMOTE_ALLOW_ADDRESSES', 'QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES'] as const) parseAddressList(values[setting], setting);
  const { homeDir, store } = locateStore({
    env: { QUIVER_HOME: values.QUIVER_HOME, QUIVER_DATA_DIR: values.QUIVER_DATA_DIR, QUIVER_DATABASE_URL: values.QUIVER_DATABASE_URL, HOME: env.HOME },
    overrides,
    uid: facts.uid,
  });

  const logLevel = overrides.logLevel ?? values.QUIVER_LOG_LEVEL ?? overrides.defaultLogLevel ?? 'info';
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new QuiverError(ErrorCodes.config, `invalid log level '${logLevel}' (use one of ${logLevels.join(', ')})`);
  }

  const embedderKind = values.QUIVER_EMBEDDER ?? defaultEmbedderKind;
  let embedder: QuiverConfig['embedder'];
  if (embedderKind === 'local') {
    if (!values.QUIVER_EMBEDDER_MODEL_PATH) {
      throw new QuiverError(ErrorCodes.config, 'QUIVER_EMBEDDER=local needs QUIVER_EMBEDDER_MODEL_PATH (a local model folder)');
    }
    embedder = { kind: 'local', modelPath: values.QUIVER_EMBEDDER_MODEL_PATH };
  } else if (embedderKind === 'openai') {
    if (!values.QUIVER_EMBEDDER_BASE_URL || !values.QUIVER_EMBEDDER_MODEL) {
      throw new QuiverError(ErrorCodes.config, 'QUIVER_EMBEDDER=openai needs QUIVER_EMBEDDER_BASE_URL and QUIVER_EMBEDDER_MODEL');
    }
    embedder = {
      kind: 'openai',
      baseUrl: values.QUIVER_EMBEDDER_BASE_URL,
      model: values.QUIVER_EMBEDDER_MODEL,
      apiKey: readSecret(env, 'QUIVER_EMBEDDER_API_KEY'),
      dimensions: values.QUIVER_EMBEDDER_DIMENSIONS,
    };
  } else {
    // QUIVER_EMBEDDER_MODEL_PATH may point the shipped model at another copy of its files (the
    // table at another table file).
    embedder = embedderKind === 'model' ? { kind: 'model', modelPath: values.QUIVER_EMBEDDER_MODEL_PATH } : embedderKind === 'table' ? { kind: 'table', tablePath: values.QUIVER_EMBEDDER_MODEL_PATH } : { kind: 'offline' };
  }

  // Node refuses a header timeout longer than the whole request's.
  if (values.QUIVER_HTTP_HEADERS_TIMEOUT_MS > values.QUIVER_HTTP_REQUEST_TIMEOUT_MS) {
    throw new QuiverError(ErrorCodes.config, 'QUIVER_HTTP_HEADERS_TIMEOUT_MS must not exceed QUIVER_HTTP_REQUEST_TIMEOUT_MS');
  }
  if ((values.QUIVER_LLM_BASE_URL === undefined) !== (values.QUIVER_LLM_MODEL === undefined)) {
    throw new QuiverError(ErrorCodes.config, 'LLM enrichment needs both QUIVER_LLM_BASE_URL and QUIVER_LLM_MODEL');
  }
  const llm: QuiverConfig['llm'] = values.QUIVER_LLM_BASE_URL === undefined || values.QUIVER_LLM_MODEL === undefined
    ? undefined
    : {
        baseUrl: values.QUIVER_LLM_BASE_URL,
        model: values.QUIVER_LLM_MODEL,
        apiKey: readSecret(env, 'QUIVER_LLM_API_KEY'),
        timeoutMs: values.QUIVER_LLM_TIMEOUT_MS,
        priceInputPerMillion: values.QUIVER_LLM_PRICE_INPUT,
        priceOutputPerMillion: values.QUIVER_LLM_PRICE_OUTPUT,
      };

  const config: QuiverConfig = {
    store,
    databasePoolSize: values.QUIVER_DATABASE_POOL_SIZE,
    homeDir,
    http: {
      host: overrides.host ?? values.QUIVER_HOST ?? '127.0.0.1',
      port: overrides.port ?? values.QUIVER_PORT ?? DEFAULT_PORT,
      allowAllInterfaces: overrides.allowAllInterfaces ?? false,
      headersTimeoutMs: values.QUIVER_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: values.QUIVER_HTTP_REQUEST_TIMEOUT_MS,
      maxConnectionsPerClient: values.QUIVER_HTTP_MAX_CONNECTIONS_PER_CLIENT,
    },
    logLevel: logLevel as QuiverConfig['logLevel'],
    secretKey: readSecret(env, 'QUIVER_SECRET_KEY'),
    secretKeyFile: env.QUIVER_SECRET_KEY_FILE || undefined,
    dangerouslyAllowUnsandboxed: values.QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED,
    embedder,
    llm,
    telemetry: telemetryConfig(values, env),
    commandEnv: { ...env },
    timing: {
      pluginPoolSize: values.QUIVER_PLUGIN_POOL_SIZE,
      pluginPingIntervalMs: values.QUIVER_PLUGIN_PING_INTERVAL_MS,
      callEventRetentionDays: values.QUIVER_CALL_EVENTS_RETENTION_DAYS,
      apiKeyCacheMs: values.QUIVER_API_KEY_CACHE_MS,
      discoveryTimeoutMs: values.QUIVER_DISCOVERY_TIMEOUT_MS,
      gitTimeoutMs: values.QUIVER_GIT_TIMEOUT_MS,
      npmTimeoutMs: values.QUIVER_NPM_TIMEOUT_MS,
      buildTimeoutMs: values.QUIVER_BUILD_TIMEOUT_MS,
    },
    embeddings: {
      background: (values.QUIVER_EMBEDDINGS ?? 'background') === 'background',
      sweepIntervalMs: values.QUIVER_EMBEDDINGS_SWEEP_MS ?? 60_000,
    },
    mcp: {
      maxSessions: values.QUIVER_MCP_MAX_SESSIONS,
      maxSessionsPerKey: values.QUIVER_MCP_MAX_SESSIONS_PER_KEY,
      maxSessionsPerOrg: values.QUIVER_MCP_MAX_SESSIONS_PER_ORG,
      sessionIdleTtlMs: values.QUIVER_MCP_SESSION_IDLE_SECONDS * 1000,
      maxConcurrentSearches: values.QUIVER_MCP_MAX_CONCURRENT_SEARCHES,
      maxQueuedSearches: values.QUIVER_MCP_MAX_QUEUED_SEARCHES,
      maxWaitMs: values.QUIVER_MCP_MAX_WAIT_MS,
      sessionStore: values.QUIVER_MCP_SESSIONS,
    },
    trustProxy: values.QUIVER_TRUST_PROXY,
    authServer: {
      mode: values.QUIVER_AUTH_SERVER,
      issuer: values.QUIVER_AUTH_ISSUER,
      accessTokenTtlSeconds: values.QUIVER_AUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: values.QUIVER_AUTH_REFRESH_TOKEN_TTL_SECONDS,
      allowPrivateClientMetadata: values.QUIVER_AUTH_TEST_PRIVATE_CLIENT_METADATA === '1',
    },
    trust: {
      runtimeThreshold: values.QUIVER_TRUST_RUNTIME_THRESHOLD,
      windowHours: values.QUIVER_TRUST_WINDOW_HOURS,
      minCalls: values.QUIVER_TRUST_MIN_CALLS,
      evaluateIntervalMs: values.QUIVER_TRUST_EVALUATE_INTERVAL_MS,
      egressLogDays: values.QUIVER_TRUST_EGRESS_LOG_DAYS,
    },
    learning: {
      enabled: values.QUIVER_LEARNING_ENABLED === undefined || ['1', 'true', 'yes'].includes(values.QUIVER_LEARNING_ENABLED),
      perToolCap: values.QUIVER_LEARNING_PER_TOOL_CAP,
      contributorShare: values.QUIVER_LEARNING_CONTRIBUTOR_SHARE,
      retentionDays: values.QUIVER_LEARNING_RETENTION_DAYS,
    },
    verification: {
      onInstall: values.QUIVER_VERIFY_ON_INSTALL,
      jobsPollMs: values.QUIVER_JOBS_POLL_MS,
      jobsLeaseMs: values.QUIVER_JOBS_LEASE_MS,
      stageTimeoutMs: values.QUIVER_VERIFY_STAGE_TIMEOUT_MS,
      registryUrl: values.QUIVER_VERIFY_REGISTRY_URL ?? env.npm_config_registry ?? 'https://registry.npmjs.org',
      licenseAllowList: values.QUIVER_VERIFY_LICENSES === undefined
        ? [...DEFAULT_LICENSE_ALLOW_LIST]
        : values.QUIVER_VERIFY_LICENSES.split(',').map((id) => id.trim()).filter(Boolean),
    },
    oauth: oauthConfig(values, env),
    remoteOAuth: {
      allowAddresses: [values.QUIVER_REMOTE_ALLOW_ADDRESSES, values.QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES].filter((text) => text !== undefined && text.trim() !== '').join(',') || undefined,
      publicUrl: values.QUIVER_PUBLIC_URL,
    },
    rollouts: {
      steps: values.QUIVER_ROLLOUT_STEPS,
      stepWindowMs: values.QUIVER_ROLLOUT_STEP_WINDOW_MS,
      stepCalls: values.QUIVER_ROLLOUT_STEP_CALLS,
      minSamples: values.QUIVER_ROLLOUT_MIN_SAMPLES,
      maxErrorRateDelta: values.QUIVER_ROLLOUT_MAX_ERROR_RATE_DELTA,
      maxP95Ratio: values.QUIVER_ROLLOUT_MAX_P95_RATIO,
      minP95DeltaMs: values.QUIVER_ROLLOUT_MIN_P95_DELTA_MS,
      tickMs: values.QUIVER_ROLLOUT_TICK_MS,
      reverifyAfter: values.QUIVER_ROLLOUT_REVERIFY_AFTER,
      folderRetentionMs: values.QUIVER_ROLLOUT_FOLDER_RETENTION_MS,
      recentCallMs: values.QUIVER_ROLLOUT_RECENT_CALL_MS,
      sweepIntervalMs: values.QUIVER_ROLLOUT_SWEEP_INTERVAL_MS,
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}


/** Metrics access, trace export and shutdown draining (`QUIVER_METRICS`, `QUIVER_OTLP_*`, `OTEL_*`, `QUIVER_SHUTDOWN_DRAIN_SECONDS`). */
export interface TelemetryConfig {
  /** Who may read /metrics: a key with the `metrics` scope (default), anyone (`open`), or nobody (`off`: 404). */
  metrics: 'key' | 'open' | 'off';
  /** Trace export over OTLP/HTTP; undefined when no endpoint is configured (tracing off, the SDK never loads). */
  tracing: { tracesUrl: string; headers: Record<string, string>; serviceName: string; sampleRatio: number } | undefined;
  /** How long a stopping server answers 503 on /readyz while still serving, ms (QUIVER_SHUTDOWN_DRAIN_SECONDS, default 0). */
  drainMs: number;
}

/** `k1=v1,k2=v2` (the OTLP headers format, values URL-encoded) as a record. */
function parseOtlpHeaders(text: string | undefined, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new QuiverError(ErrorCodes.config, `${name}: expected key=value pairs separated by commas`);
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new QuiverError(ErrorCodes.config, `${name}: a value is not valid URL encoding`);
    }
  }
  return headers;
}

/** The traces URL: QUIVER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT are bases (…/v1/traces is added), the TRACES one is used as given. */
function telemetryConfig(values: z.infer<typeof envSchema>, env: Env): TelemetryConfig {
  const base = values.QUIVER_OTLP_ENDPOINT ?? (values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? undefined : values.OTEL_EXPORTER_OTLP_ENDPOINT);
  const tracesUrl = base === undefined ? values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT : /\/v1\/traces\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/v1/traces`;
  const disabled = values.OTEL_SDK_DISABLED === 'true' || values.OTEL_SDK_DISABLED === '1';
  const headerText = readSecret(env, 'QUIVER_OTLP_HEADERS');
  return {
    metrics: values.QUIVER_METRICS,
    tracing:
      tracesUrl === undefined || disabled
        ? undefined
        : {
            tracesUrl,
            headers: headerText !== undefined ? parseOtlpHeaders(headerText, 'QUIVER_OTLP_HEADERS') : parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
            serviceName: values.OTEL_SERVICE_NAME ?? 'quiver',
            sampleRatio: values.QUIVER_TRACE_SAMPLE_RATIO,
          },
    drainMs: Math.round(values.QUIVER_SHUTDOWN_DRAIN_SECONDS * 1000),
  };
}
