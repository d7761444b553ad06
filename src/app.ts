/**
 * @module app
 * The composition root: the one place that turns configuration into wired parts. Fronts
 * (CLI, HTTP, MCP) receive an `App` and never build services themselves.
 */
import { mkdirSync } from 'node:fs';
import pino from 'pino';
import type { QuiverConfig } from './config.ts';
import type { App } from './composition/app-type.ts';
import type { Logger } from './core/logger.ts';
import { ErrorCodes, QuiverError } from './core/errors.ts';
import type { Database } from './store/database.ts';
import { openStore, type OpenedStore } from './store/open.ts';
import { createApiKeyService } from './access/api-keys.ts';
import { createCatalogService } from './catalog/index.ts';
import { createRemoteOAuth, parseOwnerLabel } from './plugins/oauth/remote-oauth.ts';
import { createGuardedFetch, createRemotePluginFetch, parseOAuthNetworkPolicy } from './plugins/oauth/network-guard.ts';
import { createProxyTrust } from './access/trusted-proxy.ts';
import { withWaitingDiscovery } from './composition/remote-oauth-discovery.ts';
import { withRemoteRevocation } from './plugins/oauth/revoke-on-removal.ts';
import { createCallEventRecorder } from './runtime/call-event-recorder.ts';
import { createPluginService } from './plugins/service.ts';
import { createLazySecretBox, loadSecretKey } from './plugins/secret-box.ts';
import { createPluginHealth } from './plugins/health.ts';
import type { ApiRouteModule } from './api/app.ts';
import { accessRoutes } from './api/routes/access.ts';
import { catalogRoutes } from './api/routes/catalog.ts';
import { pluginRoutes } from './api/routes/plugins.ts';
import type { OAuthRouteServices } from './api/routes/plugins/oauth.ts';
import { createBrowserAuthorization } from './plugins/oauth/browser-flow.ts';
import { clientMetadataFor } from './plugins/oauth/client-metadata.ts';
import { selectionRoutes } from './api/routes/selection.ts';
import { embeddingRoutes } from './api/routes/embeddings.ts';
import { uiRoutes } from './api/routes/ui.ts';
import type { RandomSource } from './selection/random.ts';
import { createTenantVisibility } from './composition/tenant-visibility.ts';
import { createToolListFollower } from './composition/tool-list-follower.ts';
import type { TenantVisibility } from './api/tenancy.ts';
import { regenerateIntelligence, verifyAfterInstall } from './composition/after-install.ts';
import { createChangeBroadcast, pluginServiceSettings, recoverInstalls, registerPeriodicWork, trustSettings, wireEmbeddings, wireSelectionGroup, wireSupervisor, wireVerification } from './composition/app-wiring.ts';
import { createAwaitedEvents, createEvents } from './core/events.ts';
import type { CacheKind } from './selection/invalidation.ts';
import { storeToolTokenCounts } from './selection/token-counts.ts';
import type { PluginChangeEvent } from './plugins/service/types.ts';
import type { PluginEgressDecision } from './runtime/supervisor/api.ts';
import type { Embedder } from './retrieval/embedders/embedder.ts';
import { createOfflineEmbedder } from './retrieval/embedders/offline.ts';
import { createShippedModelEmbedder, createShippedTableEmbedder } from './retrieval/embedders/shipped-model.ts';
import type { ReportingEmbedder } from './retrieval/embedders/fallback.ts';
import { createOpenAICompatibleEmbedder } from './retrieval/embedders/openai-compatible.ts';
import { createTransformersEmbedder } from './retrieval/embedders/transformers.ts';
import { learnedExampleRoutes } from './api/routes/learned-examples.ts';
import { pidGenerationRoutes } from './api/routes/plugins/pid-generation.ts';
import { createPinningService } from './trust/pinning/index.ts';
import { createTrustService } from './trust/service.ts';
import { createTrustEnforcement } from './trust/enforcement.ts';
import type { TrustChange } from './trust/types.ts';
import { createTelemetry } from './telemetry/index.ts';
import { wireRollouts } from './composition/rollout-wiring.ts';
import { withSlotReconcile } from './composition/slot-reconcile.ts';
import { rolloutRoutes } from './api/routes/plugins/rollouts.ts';
import { wirePidGeneration } from './composition/intelligence-wiring.ts';

export type { App } from './composition/app-type.ts';

/** Creates the structured JSON logger of the app (stderr, so stdout can carry MCP). */
export function createLogger(level: QuiverConfig['logLevel']): Logger {
  return pino(
    {
      level,
      base: { service: 'quiver' },
      redact: { paths: ['*.apiKey', '*.authorization', '*.headers.authorization', '*.env', '*.secret', '*.value'], censor: '[redacted]' },
    },
    pino.destination(2),
  ) as unknown as Logger;
}

/** The embedder the configuration asks for (the table distilled from the shipped model by default, the hashed one as its fallback). */
export function createEmbedder(config: QuiverConfig['embedder'], logger?: Logger): Embedder {
  switch (config.kind) {
    case 'table':
      return createShippedTableEmbedder({ tablePath: config.tablePath, ...(logger ? { logger: logger.child({ part: 'embedder' }) } : {}) });
    case 'model':
      return createShippedModelEmbedder({ modelDir: config.modelPath, ...(logger ? { logger: logger.child({ part: 'embedder' }) } : {}) });
    case 'local':
      return createTransformersEmbedder({ modelPath: config.modelPath });
    case 'openai':
      return createOpenAICompatibleEmbedder({
        baseURL: config.baseUrl,
        model: config.model,
        ...(config.apiKey ? { apiKey: config.apiKey } : {}),
        ...(config.dimensions ? { dimensions: config.dimensions } : {}),
      });
    default:
      return createOfflineEmbedder();
  }
}

export interface CreateAppOptions {
  logger?: Logger;
  /** An already-open, migrated database (tests run one body on every backend this way). */
  db?: Database;
  /**
   * The store of `config.store`, already opening (issue #28: the CLI starts PGlite while this
   * module's imports load). The app owns it from here: it is closed on failure and on close.
   */
  store?: Promise<OpenedStore>;
  /** Uniform source of the selection bandit (a seeded one makes `quiver eval --replay` reproducible). */
  selectionRandom?: RandomSource;
}

/**
 * Opens the store and wires every part, in the order of docs/engineering.md ("Construction
 * order"): each part receives only parts built before it. A part built early that must reach one
 * built later is given an event's `emit`, and the later part subscribes once it exists
 * (core/events.ts); no closure captures a variable assigned after it (test/construction-order.test.ts).
 */
export async function createApp(config: QuiverConfig, options: CreateAppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { db, migrations } = options.db ? { db: options.db, migrations: [] } : await (options.store ?? openStore(config.store, { poolSize: config.databasePoolSize }));
  const closers: Array<() => Promise<void>> = [() => db.close()];
  // Installs a crash interrupted are rolled back before anything is served (issue #18 finding 8):
  // started now, while the parts below are built (none of them serves, installs or launches a
  // plugin yet), and awaited before the app is returned (issue #28: its folder reads waited on a
  // busy start for 0.05-0.7 s with nothing else to do). It never rejects.
  const recovery = recoverInstalls({ db, config, logger });
  try {
    if (config.store.kind !== 'memory') {
      // 0711: sandboxed plugins run as an unprivileged user and must traverse into their folders.
      mkdirSync(config.homeDir, { recursive: true, mode: 0o711 });
    }
    const listenerFailed = (error: unknown) => logger.warn({ err: error }, 'an app event listener threw');
    // The late links, as events: emitted by a part built early, heard by a part built later.
    // Cache kinds to drop in this process (the selection engine subscribes once built).
    const localChanges = createEvents<CacheKind>(listenerFailed);
    // Trust changes (the enforcement re-sandboxes on a fall below the runtime threshold, issue #23).
    const trustChanges = createEvents<TrustChange>(listenerFailed);
    // Re-verifications trust asks for (verification is built on the plugins service, which needs trust).
    const reverifications = createAwaitedEvents<{ pluginId: string; reason: string }>(listenerFailed);
    // Egress decisions of sandboxed plugins (the enforcement is built on the supervisor that makes them).
    const egressDecisions = createEvents<PluginEgressDecision>(listenerFailed);
    // Committed plugin changes (verification and PID generation are built on the plugins service).
    const pluginChanges = createEvents<PluginChangeEvent>(listenerFailed);

    // First in, so it closes last but the database: the final spans of everything else are flushed.
    const telemetry = await createTelemetry({ settings: config.telemetry, db, logger: logger.child({ part: 'telemetry' }) });
    closers.unshift(() => telemetry.close());
    const apiKeys = createApiKeyService({ db, cacheTtlMs: config.timing.apiKeyCacheMs, logger: logger.child({ part: 'api-keys' }) });
    closers.unshift(() => apiKeys.close());
    await apiKeys.ready();
    // Every committed change drops the selection caches here and, through NOTIFY, in every replica.
    const broadcast = createChangeBroadcast(db, logger, localChanges.emit);
    const embedder = createEmbedder(config.embedder, logger);
    // The model's worker thread (issue #25).
    closers.unshift(async () => void (await embedder.close?.()));
    // A model that fell back to the hashed embedder keeps the replica ready but says so (issue #25).
    telemetry.readiness.addWarnings(() => {
      const status = (embedder as Partial<ReportingEmbedder>).status?.();
      return status?.warning ? [status.warning] : [];
    });
    const embeddings = wireEmbeddings({ db, config, logger, embedder, broadcast });
    closers.unshift(() => embeddings.close());
    const catalog = createCatalogService({
      db,
      logger,
      // Synced tools' token counts are stored, so selections need no tokenizer for them (issue #28).
      afterSync: storeToolTokenCounts,
      onChange: (event) => {
        broadcast(event.kind, 'catalog');
        // New or changed tools get their vectors in the background (issue #15).
        if (event.kind === 'tools') embeddings.schedule();
      },
    });
    // Tool pinning (issue #10): a quarantine may leave the catalog rows as they were, so a
    // change drops the selection's tool snapshot here and, through NOTIFY, in every replica.
    const pinning = createPinningService({
      db,
      catalog,
      logger: logger.child({ part: 'pinning' }),
      onChange: () => broadcast('tools', 'pinning'),
    });
    // Trust (issue #10): a grant, cap, egress rule or runtime-trust crossing drops cached launch
    // specs here and in every replica; the plugin restarts with its new isolation on its next call.
    const trust = createTrustService({
      db,
      logger: logger.child({ part: 'trust' }),
      settings: trustSettings(config),
      onChange: (change) => {
        broadcast('enablement', 'trust');
        trustChanges.emit(change);
      },
      requestReverification: (pluginId, reason) => reverifications.emit({ pluginId, reason }),
    });
    closers.unshift(() => trust.close());
    const group = wireSelectionGroup({
      db,
      config,
      logger,
      embedder,
      trust: {
        isQuarantined: (toolId) => pinning.isToolQuarantined(toolId),
        trustFactor: (pluginId) => trust.rankingFactor(pluginId),
      },
      random: options.selectionRandom,
    });
    closers.unshift(() => group.close());
    const { learning } = group;
    // Selections are measured and traced (issue #16) for every front that uses the app's engine.
    const selection = telemetry.instrumentSelection(group.engine);
    localChanges.subscribe((kind) => selection.invalidate(kind));
    // Every upstream call becomes a row of plugin_call_events (runtime issue "Health").
    // Closers run first to last and are unshifted: the recorder's goes in before the
    // supervisor's, so on close the supervisor stops first (its last calls are queued), then
    // the recorder flushes, then the database closes.
    const callEvents = createCallEventRecorder({ db, retentionDays: config.timing.callEventRetentionDays, logger: logger.child({ part: 'call-events' }) });
    closers.unshift(() => callEvents.close());
    const secrets = createLazySecretBox(() => loadSecretKey({ configured: config.secretKey, homeDir: config.homeDir }).key);
    // Issue #27: Quiver as an OAuth client of remote plugins; their calls carry its tokens, refreshed before expiry.
    // Its OAuth requests, and remote plugins' own connections, reach public addresses only unless
    // QUIVER_REMOTE_ALLOW_ADDRESSES says more (SSRF guard, checked again on each connection).
    const remoteAddresses = parseOAuthNetworkPolicy(config.remoteOAuth?.allowAddresses);
    const remoteOAuthClient = createRemoteOAuth({
      db,
      secrets,
      fetchFor: createGuardedFetch(remoteAddresses),
      // A Client ID Metadata Document instead of registering, where the server supports it (needs QUIVER_PUBLIC_URL, https).
      clientMetadata: clientMetadataFor(config.remoteOAuth?.publicUrl),
    });
    // A spec bound to an owner (a per-user or per-organisation server) carries that owner's token, never the hub's.
    const remoteToken = (url: string, owner: string | undefined) => {
      if (owner === undefined) return remoteOAuthClient.accessToken(url);
      const parsed = parseOwnerLabel(owner);
      if (!parsed) throw new QuiverError(ErrorCodes.missingCredential, 'a remote connection names an unknown authorization owner: refused');
      return remoteOAuthClient.accessToken(url, parsed);
    };
    const supervisor = wireSupervisor({
      db,
      config,
      logger,
      remoteAuthorization: remoteToken,
      remoteFetch: createRemotePluginFetch(remoteAddresses),
      onCall: (event) => (callEvents.record(event), telemetry.recordToolCall(event)),
      onEgressDecision: (decision) => (trust.recordDecision(decision), egressDecisions.emit(decision)),
    });
    closers.unshift(() => supervisor.close());
    telemetry.watch({ supervisor, caches: () => selection.cacheStats(), callEvents: () => callEvents.stats() });
    // Dynamic trust acts within seconds (issue #23): a denied egress decision is judged at once, a
    // fall below the runtime threshold re-sandboxes the plugin now, not at its next start.
    const enforcement = createTrustEnforcement({ trust, supervisor, logger: logger.child({ part: 'trust-enforcement' }) });
    closers.unshift(() => enforcement.close());
    egressDecisions.subscribe((decision) => enforcement.observe(decision));
    trustChanges.subscribe((change) => {
      if (change.kind === 'runtime' && change.belowThreshold === true) void enforcement.resandbox(change.pluginId);
    });
    // Every committed change to installation, status, enablement, exposure, secrets or settings
    // drops the selection caches here and, through NOTIFY, in every replica and the gateway's
    // cached launch specs (the supervisor then restarts a plugin whose environment changed).
    // Removing a remote plugin revokes the authorization Quiver held for it (issue #27).
    const plugins = withRemoteRevocation(createPluginService({
      db,
      catalog,
      supervisor,
      ...pluginServiceSettings(config),
      secrets,
      pinning,
      launchTrust: (pluginId) => trust.launchTrust(pluginId),
      logger: logger.child({ part: 'plugins' }),
      onChange: (event) => {
        broadcast('enablement', 'plugins');
        pluginChanges.emit(event);
      },
    }), { db, remoteOAuth: remoteOAuthClient, logger: logger.child({ part: 'remote-oauth' }) });
    // A plugin installed before its authorization (it answered 401) is discovered once one completes (issue #27).
    const remoteOAuth = withWaitingDiscovery(remoteOAuthClient, plugins);
    // The admin UI's Connect: the flow in the user's browser, back to Quiver's callback (issue #27).
    const remoteOAuthRoutes: OAuthRouteServices = {
      remoteOAuth,
      browser: createBrowserAuthorization({ remoteOAuth, secrets }),
      publicUrl: config.remoteOAuth?.publicUrl,
      // Behind a proxy named in QUIVER_TRUST_PROXY the callback is at the origin it forwarded.
      proxyTrust: createProxyTrust(config.trustProxy),
    };
    // Issue #24: a running plugin's tools/list_changed re-syncs its tools (debounced, one sync at a time).
    const toolListFollower = createToolListFollower({ supervisor, plugins, logger: logger.child({ part: 'tool-list-follower' }) });
    closers.unshift(() => toolListFollower.close());
    const { jobs, verification } = wireVerification({ db, config, logger, plugins, secrets, pinning, broadcast });
    closers.unshift(() => jobs.close());
    const installVerification = verifyAfterInstall({ config, logger, verification });
    pluginChanges.subscribe(installVerification.onChange);
    // Closed before the job queue and the database: a command that installed a plugin and exits
    // (`quiver plugin add`) has queued its verification before they close.
    closers.unshift(() => installVerification.settle());
    // Awaited: a user report answers once its re-verification is on the (durable) job queue.
    reverifications.subscribe(async ({ pluginId, reason }) => {
      await verification.enqueue(pluginId, reason);
    });
    registerPeriodicWork(jobs, config, { callEvents, embeddings });
    // A sync or update regenerates an already generated intelligence document (issue #14).
    const pidGeneration = wirePidGeneration({ db, config, plugins, catalog });
    const regeneration = regenerateIntelligence({ logger, pidGeneration });
    pluginChanges.subscribe(regeneration.onChange);
    // First to close: a regeneration under way still needs the plugins, the supervisor and the database.
    closers.unshift(() => regeneration.settle());
    const rollouts = wireRollouts({ db, config, logger, plugins, supervisor, callEvents, verification, jobs });
    closers.unshift(() => rollouts.close());

    // The recovery started above has finished before the app exists; a plugin it removed leaves no tool behind.
    if (await recovery) selection.invalidate('tools');
    const pluginHealth = createPluginHealth({ db, plugins, supervisor, beforeRead: () => callEvents.flush() });
    const tenancy = createTenantVisibility(selection, { db });
    let closed = false;
    const app: App = {
      config,
      logger,
      db,
      migrations,
      apiKeys,
      catalog,
      supervisor,
      // Issue #29: removal and update reconcile the slots (the rollout service runs on the plain service).
      plugins: withSlotReconcile(plugins, rollouts, logger.child({ part: 'rollouts' })),
      remoteOAuth,
      callEvents,
      pluginHealth,
      selection,
      learning,
      pinning,
      trust,
      embedder,
      embeddings,
      jobs,
      verification,
      telemetry,
      rollouts,
      pidGeneration,
      async close() {
        if (closed) return;
        closed = true;
        for (const close of closers) await close().catch((error) => logger.warn({ err: error }, 'close failed'));
      },
      apiModules: () => routeModules(app, tenancy, remoteOAuthRoutes),
    };
    // Every part is built and every late link subscribed: trust may now evaluate and emit.
    trust.start();
    return app;
  } catch (error) {
    // The recovery's statements finish before the database closes under them.
    await recovery;
    for (const close of closers) await close().catch(() => {});
    throw error;
  }
}

/** The REST API's route modules over the app's services (tenant visibility filters what they show). */
function routeModules(app: App, tenancy: TenantVisibility, oauth: OAuthRouteServices): ApiRouteModule[] {
  const { apiKeys, catalog, rollouts, plugins, pluginHealth, pinning, verification, trust, selection, learning, pidGeneration, embeddings } = app;
  return [
    accessRoutes({ apiKeys }),
    catalogRoutes({ catalog, tenancy }),
    rolloutRoutes(rollouts),
    pluginRoutes({ plugins, tenancy, health: pluginHealth, pinning, verification, trust, oauth }),
    selectionRoutes({ selection, tenancy }),
    learnedExampleRoutes({ learning, tenancy }),
    pidGenerationRoutes({ pidGeneration }),
    embeddingRoutes({ embeddings }),
    uiRoutes(),
  ];
}
