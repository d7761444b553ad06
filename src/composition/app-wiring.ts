/**
 * @module composition/app-wiring
 * The configuration-to-options mappings of `createApp` (src/app.ts), one per service that takes
 * more than its database and logger, and the one way a committed change reaches every cache:
 * `createChangeBroadcast` drops this process's selection caches and NOTIFYs the other replicas.
 * Kept apart so that `createApp` reads as the order in which parts are wired, not as option lists.
 */
import { join } from 'node:path';
import type { QuiverConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import { createSelectionEngine, notifyCatalogChanged, type SelectionEngine } from '../selection/index.ts';
import type { RandomSource } from '../selection/random.ts';
import { createPersistentRetrieval } from '../selection/persistent-retrieval.ts';
import { createLearning, withLearnedExamples, type Learning } from '../selection/learning/index.ts';
import type { Embedder } from '../retrieval/embedders/embedder.ts';
import { createEmbeddingWorker, EMBEDDING_SWEEP_JOB, type EmbeddingWorker } from '../retrieval/embedding-worker.ts';
import { PRUNE_CALL_EVENTS_JOB, type CallEventRecorder } from '../runtime/call-event-recorder.ts';
import type { CacheKind } from '../selection/invalidation.ts';
import type { PluginServiceOptions } from '../plugins/service/types.ts';
import type { TrustServiceOptions } from '../trust/types.ts';
import type { VerificationSettings } from '../verification/types.ts';
import type { PluginService } from '../plugins/service.ts';
import type { SecretBox } from '../plugins/secret-box.ts';
import { recoverInterruptedInstalls } from '../plugins/recovery.ts';
import { createSupervisor, type SandboxOptions, type Supervisor } from '../runtime/index.ts';
import { createSharedLimits } from '../runtime/replica-limits.ts';
import type { CallEvent } from '../runtime/types.ts';
import type { PinningService } from '../trust/pinning/index.ts';
import { createJobs, type Jobs } from '../jobs/index.ts';
import { createVerificationService, type VerificationService } from '../verification/service/index.ts';
import { runPipelineIsolated } from '../verification/isolated/index.ts';
import { checkRemotePluginUrl, createRemotePluginFetch, parseOAuthNetworkPolicy } from '../plugins/oauth/network-guard.ts';

/** Tells this process and, through NOTIFY, every replica that `kind` changed; `source` names the writer in logs. */
export type ChangeBroadcast = (kind: CacheKind, source: string) => void;

/**
 * The broadcast of a change: `invalidateHere` drops this process's caches at once (the app passes
 * an event the selection engine subscribes to once it is built: before, there is nothing to
 * drop), NOTIFY reaches the others. A failed NOTIFY is logged, never thrown at the writer whose write has committed.
 */
export function createChangeBroadcast(db: Database, logger: Logger, invalidateHere: (kind: CacheKind) => void): ChangeBroadcast {
  return (kind, source) => {
    invalidateHere(kind);
    void notifyCatalogChanged(db, kind).catch((error: unknown) => logger.warn({ err: error, source }, `${source} change notification failed`));
  };
}

/** Where plugins live under the home: the install cache and their writable state folders. */
export function pluginFolders(config: QuiverConfig): { cacheDir: string; stateRoot: string } {
  return { cacheDir: join(config.homeDir, 'plugins'), stateRoot: join(config.homeDir, 'state') };
}

/** The plugins service's settings from the configuration (folders under the home, time limits, command environment). */
export function pluginServiceSettings(config: QuiverConfig): Pick<
  PluginServiceOptions,
  'cacheDir' | 'dangerouslyAllowUnsandboxed' | 'commandEnv' | 'discoveryTimeoutMs' | 'gitTimeoutMs' | 'npmTimeoutMs' | 'buildTimeoutMs' | 'protectedPaths' | 'checkRemoteUrl' | 'fetchRemoteDocument'
> & { stateRoot: string } {
  const remoteAddresses = parseOAuthNetworkPolicy(config.remoteOAuth?.allowAddresses);
  return {
    // Issue #27: a remote plugin whose host is a loopback, private or link-local address is refused unless admitted.
    checkRemoteUrl: (url) => checkRemotePluginUrl(url, remoteAddresses),
    // The OpenAPI document of an `openapi:` URL source: the admin named it like a remote plugin's URL.
    fetchRemoteDocument: createRemotePluginFetch(remoteAddresses),
    ...pluginFolders(config),
    protectedPaths: hubPaths(config),
    dangerouslyAllowUnsandboxed: config.dangerouslyAllowUnsandboxed,
    commandEnv: config.commandEnv,
    discoveryTimeoutMs: config.timing.discoveryTimeoutMs,
    gitTimeoutMs: config.timing.gitTimeoutMs,
    npmTimeoutMs: config.timing.npmTimeoutMs,
    buildTimeoutMs: config.timing.buildTimeoutMs,
  };
}

/**
 * The hub's own paths (issues #23, #26): its home (plugin cache, state, key), its data folder and
 * a key file kept elsewhere. The sandbox masks them; no host-path grant may touch them.
 */
export function hubPaths(config: QuiverConfig): string[] {
  return [
    config.homeDir,
    join(config.homeDir, 'secret.key'),
    ...(config.secretKeyFile === undefined ? [] : [config.secretKeyFile]),
    ...(config.store.kind === 'folder' ? [config.store.path] : []),
  ];
}

/** Dynamic trust settings (issue #10) from `QUIVER_TRUST_*`. */
export function trustSettings(config: QuiverConfig): NonNullable<TrustServiceOptions['settings']> {
  return {
    runtimeThreshold: config.trust.runtimeThreshold,
    windowMs: config.trust.windowHours * 3_600_000,
    minCalls: config.trust.minCalls,
    evaluateIntervalMs: config.trust.evaluateIntervalMs,
    egressLogDays: config.trust.egressLogDays,
  };
}

/** What the verification stages read (issue #10) from `QUIVER_VERIFY_*`. */
export function verificationSettings(config: QuiverConfig): VerificationSettings {
  return {
    registryUrl: config.verification.registryUrl,
    licenseAllowList: config.verification.licenseAllowList,
    stageTimeoutMs: config.verification.stageTimeoutMs,
    // Issue #27: the probe of a remote plugin is held to the same SSRF guard as its connections.
    remoteNetwork: { allowAddresses: config.remoteOAuth?.allowAddresses },
  };
}

/** What ranking needs from trust (issue #10); both are built before it and passed in. */
export interface SelectionTrust {
  /** Tool pinning: is this catalog tool quarantined? */
  isQuarantined(toolId: string): Promise<boolean>;
  /** The ranking factor (≤ 1) of a plugin's tools. */
  trustFactor(pluginId: string): number;
}

/**
 * The background embedding worker (issue #15): keeps tool vectors current; each batch drops the
 * tool caches everywhere. Built before the catalog, whose tool changes schedule it.
 */
export function wireEmbeddings(input: { db: Database; config: QuiverConfig; logger: Logger; embedder: Embedder; broadcast: ChangeBroadcast }): EmbeddingWorker {
  return createEmbeddingWorker({
    db: input.db,
    embedder: input.embedder,
    logger: input.logger.child({ part: 'embeddings' }),
    background: input.config.embeddings.background,
    // The sweep for other processes' writes is the periodic job `embeddings.sweep` (one replica at a time).
    sweepIntervalMs: 0,
    onEmbedded: () => input.broadcast('tools', 'embedding'),
  });
}

/** The parts that rank tools: learned examples and the engine. */
export interface SelectionGroup {
  learning: Learning;
  engine: SelectionEngine;
  /** Closes them in reverse order of creation. */
  close(): Promise<void>;
}

/**
 * Wires the selection group. Learned examples hear every committed outcome from the engine and
 * rank per organisation over the shared index (issue #13); pinning and trust (built before it)
 * keep quarantined tools out of learning and weigh a plugin's tools by its trust.
 */
export function wireSelectionGroup(input: {
  db: Database;
  config: QuiverConfig;
  logger: Logger;
  embedder: Embedder;
  trust: SelectionTrust;
  random?: RandomSource | undefined;
}): SelectionGroup {
  const { db, config, logger, embedder, trust } = input;
  // A quarantined tool teaches nothing; a check that throws counts as quarantined (fail closed).
  const learning = createLearning({ db, embedder, settings: config.learning, logger: logger.child({ part: 'learning' }), isQuarantined: trust.isQuarantined });
  const engine = createSelectionEngine({
    db,
    logger: logger.child({ part: 'selection' }),
    retrieval: () => withLearnedExamples(createPersistentRetrieval({ db, embedder, logger }), learning),
    outcomeObserver: learning,
    trustFactor: trust.trustFactor,
    // Issue #23: on the embedded database in a folder, a returned event id is journaled in that folder (PostgreSQL: written through).
    ...(config.store.kind === 'folder' ? { events: { durability: { kind: 'journal' as const, directory: join(config.store.path, 'selection-journal') } } } : {}),
    ...(input.random ? { random: input.random } : {}),
  });
  return {
    learning,
    engine,
    async close() {
      await engine.close();
      await learning.close();
    },
  };
}

/**
 * The verification service (issue #10) on its job queue. The pipeline runs in a child process:
 * parsing and watching a plugin must not stall the gateway's event loop. A verdict writes the
 * plugin's verified trust level, which decides its isolation, so cached launch specs drop here and
 * in every replica; a passed verification re-pins the tool definitions it verified.
 */
export function wireVerification(input: {
  db: Database;
  config: QuiverConfig;
  logger: Logger;
  plugins: PluginService;
  secrets: SecretBox;
  pinning: Pick<PinningService, 'pinVerified'>;
  broadcast: ChangeBroadcast;
}): { jobs: Jobs; verification: VerificationService } {
  const { db, config, logger, pinning } = input;
  const jobs = createJobs({ db, logger, pollMs: config.verification.jobsPollMs, leaseMs: config.verification.jobsLeaseMs });
  const verification = createVerificationService({
    db,
    plugins: input.plugins,
    secrets: input.secrets,
    jobs,
    // The child process runs the registered stages: this process never loads them.
    runPipeline: runPipelineIsolated,
    settings: verificationSettings(config),
    logger,
    onVerified: (pluginId, report) => {
      input.broadcast('enablement', 'verification');
      if (report.recommendation.approved) {
        void pinning.pinVerified(pluginId, report.subject.toolHashes).catch((error: unknown) => logger.warn({ err: error, pluginId }, 're-pinning after verification failed'));
      }
    },
  });
  return { jobs, verification };
}

/**
 * Rolls back installs a crash interrupted before anything is served (issue #18 finding 8);
 * true when it removed a plugin (its tools must leave the selection caches). Never rejects: a
 * failure is logged, as the plugins already installed must still be served.
 */
export async function recoverInstalls(input: { db: Database; config: QuiverConfig; logger: Logger }): Promise<boolean> {
  const { cacheDir, stateRoot } = pluginFolders(input.config);
  return recoverInterruptedInstalls({ db: input.db, cacheDir, stateRoot, logger: input.logger.child({ part: 'plugins' }) }).then(
    (recovered) => recovered.plugins.length > 0,
    (error: unknown) => {
      input.logger.warn({ err: error }, 'install crash recovery failed');
      return false;
    },
  );
}

/**
 * The plugin supervisor: every upstream call is recorded (`onCall`), idle connections answer a
 * ping every minute or are recycled (DESIGN §3.6), and every egress decision of a sandboxed
 * plugin reaches the trust service's log (issue #10).
 */
export function wireSupervisor(input: {
  config: QuiverConfig;
  /** On PostgreSQL, declared rate limits and concurrency caps hold across replicas (issue #16). */
  db?: Database;
  logger: Logger;
  onCall: (event: CallEvent) => void;
  onEgressDecision: NonNullable<SandboxOptions['onEgressDecision']>;
  /** OAuth access tokens of remote plugins by URL (issue #27). */
  remoteAuthorization?: (url: string, owner: string | undefined) => Promise<string | undefined>;
  /** The fetch of remote plugins' connections: the SSRF guard (issue #27). */
  remoteFetch?: typeof fetch;
}): Supervisor {
  const { config } = input;
  return createSupervisor({
    logger: input.logger.child({ part: 'runtime' }),
    onCall: input.onCall,
    ...(input.db?.engine === 'postgres' ? { sharedLimits: createSharedLimits({ db: input.db, logger: input.logger.child({ part: 'shared-limits' }) }) } : {}),
    pingIntervalMs: config.timing.pluginPingIntervalMs,
    poolSize: config.timing.pluginPoolSize,
    ...(input.remoteAuthorization ? { remoteAuthorization: input.remoteAuthorization } : {}),
    ...(input.remoteFetch ? { remoteFetch: input.remoteFetch } : {}),
    sandbox: {
      dangerouslyAllowUnsandboxed: config.dangerouslyAllowUnsandboxed,
      stateRoot: pluginFolders(config).stateRoot,
      // Issue #23: no plugin sees the hub's home (key file, plugin cache, state), nor its data folder.
      hiddenPaths: hubPaths(config),
      onEgressDecision: input.onEgressDecision,
    },
  });
}

/**
 * Periodic work with one owner across replicas (issue #16), as jobs: call-event retention
 * hourly, and the sweep that embeds tools other processes wrote. (The learned-example sweep
 * stays in every process: it reloads that process's in-memory examples after deleting.)
 */
export function registerPeriodicWork(jobs: Jobs, config: QuiverConfig, parts: { callEvents: CallEventRecorder; embeddings: EmbeddingWorker }): void {
  if (config.timing.callEventRetentionDays > 0) jobs.every(PRUNE_CALL_EVENTS_JOB, 3_600_000, async () => void (await parts.callEvents.prune()));
  if (config.embeddings.background && config.embeddings.sweepIntervalMs > 0) {
    jobs.every(EMBEDDING_SWEEP_JOB, config.embeddings.sweepIntervalMs, async () => void (await parts.embeddings.runNow()));
  }
}
