/**
 * @module composition/app-type
 * The `App`: every wired part a front receives from `createApp` (src/app.ts). Declared here, in
 * the composition folder, so the servers the composition root wires (server.ts, stored
 * sessions) read it without importing src/app.ts, which imports them (issue #28: no
 * app.ts <-> composition cycle).
 */
import type { QuiverConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import type { MigrationResult } from '../store/migrator.ts';
import type { ApiKeyService } from '../access/api-keys.ts';
import type { CatalogService } from '../catalog/index.ts';
import type { Supervisor } from '../runtime/index.ts';
import type { RemoteOAuth } from '../plugins/oauth/remote-oauth.ts';
import type { CallEventRecorder } from '../runtime/call-event-recorder.ts';
import type { PluginService } from '../plugins/service.ts';
import type { PluginHealthSource } from '../plugins/health.ts';
import type { ApiRouteModule } from '../api/app.ts';
import type { SelectionEngine } from '../selection/index.ts';
import type { Learning } from '../selection/learning/index.ts';
import type { PinningService } from '../trust/pinning/index.ts';
import type { TrustService } from '../trust/types.ts';
import type { Embedder } from '../retrieval/embedders/embedder.ts';
import type { EmbeddingWorker } from '../retrieval/embedding-worker.ts';
import type { Jobs } from '../jobs/index.ts';
import type { VerificationService } from '../verification/service/index.ts';
import type { Telemetry } from '../telemetry/index.ts';
import type { PidGenerationService } from '../intelligence/index.ts';
import type { RolloutService } from '../rollouts/index.ts';

/** Everything a front needs, wired. */
export interface App {
  config: QuiverConfig;
  logger: Logger;
  db: Database;
  migrations: MigrationResult[];
  apiKeys: ApiKeyService;
  catalog: CatalogService;
  supervisor: Supervisor;
  plugins: PluginService;
  /** OAuth authorizations Quiver holds as a client of remote plugins (issue #27). */
  remoteOAuth: RemoteOAuth;
  /** Persists every upstream call (`plugin_call_events`). */
  callEvents: CallEventRecorder;
  /** Plugin health for the API and `quiver plugin health`. */
  pluginHealth: PluginHealthSource;
  selection: SelectionEngine;
  /** Learned example queries (issue #13): capture from outcomes, per-organisation ranking, admin. */
  learning: Learning;
  /** Tool pinning: approved definitions, quarantines and approvals (issue #10). */
  pinning: PinningService;
  /** Effective trust, admin grants, enforced egress allow-lists, reports and dynamic trust (issue #10). */
  trust: TrustService;
  embedder: Embedder;
  /** Keeps tool embeddings current in the background; status and recompute on demand. */
  embeddings: EmbeddingWorker;
  /** Background jobs in the database; servers start its worker (`jobs.start()`), one-shot commands only enqueue. */
  jobs: Jobs;
  /** Plugin verification and signed reports (issue #10). */
  verification: VerificationService;
  /** Metrics, traces and readiness (issue #16). */
  telemetry: Telemetry;
  /** Generated intelligence documents (issue #14): sources, provenance, LLM enrichment, diff. */
  pidGeneration: PidGenerationService;
  /** Blue-green upgrades with canary steps and automatic rollback (issue #11); servers `start()` its monitor. */
  rollouts: RolloutService;
  /** The HTTP route modules of every part. */
  apiModules(): ApiRouteModule[];
  /** Stops timers, processes and the database. Safe to call twice. */
  close(): Promise<void>;
}
