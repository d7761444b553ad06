/**
 * @module rollouts/types
 * The records of blue-green upgrades (issue #11, seed 000 §5.1 and §6.2): a deployment per
 * plugin slot, a rollout per upgrade with its step and status, and the history of each rollout.
 */
import type { StagedVersion } from '../plugins/service.ts';
import type { TrustLevel, UpstreamSpec } from '../runtime/types.ts';

/** The two slots of a plugin (seed 000 §6.2 `slot IN ('blue', 'green')`). */
export type Slot = 'blue' | 'green';

/** active: serves the plugin; canary: takes a share during a rollout; idle: the previous version; failed: rolled back. */
export type DeploymentStatus = 'active' | 'canary' | 'idle' | 'failed';

/** Where a rollout is. */
/** verifying: the staged version is being verified and takes no traffic yet. */
export type RolloutStatus = 'verifying' | 'running' | 'paused' | 'promoted' | 'rolled_back';

/** One slot of a plugin (seed 000 §6.2 `deployments`). */
export interface Deployment {
  id: string;
  pluginId: string;
  version: string;
  slot: Slot;
  status: DeploymentStatus;
  trafficPercent: number;
  healthScore: number | null;
  executionMode: string | null;
  /** The version label of this slot's processes and call events (`<version>+<slot>` for a canary). */
  runtimeVersion: string;
  requestedRef: string | null;
  /** The staged install of a canary (absent for the version that was installed before any rollout). */
  install: StagedVersion | null;
  /** Tools the canary serves exactly as the active slot does: only these are routed to it. */
  routableTools: string[];
  /** Resources, templates and prompts the canary declares exactly as the active slot does (issue #29). */
  routableSurface: RoutableSurface;
  /** The install folder this slot runs from (null: a folder plugin used in place, or a remote one). */
  folder: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What else than tools a canary may serve (issue #29): the same declaration on both slots. */
export interface RoutableSurface {
  /** Resource URIs listed alike by both slots. */
  resources: string[];
  /** Resource URI templates listed alike by both slots (a read of a URI one of them matches). */
  templates: string[];
  /** Prompt names declared alike (description and arguments). */
  prompts: string[];
}

/** One upgrade of a plugin from one slot to the other. */
export interface Rollout {
  id: string;
  pluginId: string;
  fromDeployment: string;
  toDeployment: string;
  status: RolloutStatus;
  /** Canary percent per step; the last is 100 (promotion). */
  steps: number[];
  /** Index into `steps` of the current step. */
  step: number;
  stepStartedAt: Date;
  stepWindowMs: number;
  reason: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** One line of a rollout's history. */
export interface RolloutEvent {
  id: string;
  rolloutId: string;
  pluginId: string;
  kind: 'started' | 'verified' | 'step' | 'health' | 'promoted' | 'rolled_back' | 'paused' | 'resumed' | 'reverification' | 'note' | 'folder';
  message: string;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** The judge's thresholds and the step plan (config `rollouts`, `QUIVER_ROLLOUT_*`). */
export interface RolloutSettings {
  steps: readonly number[];
  stepWindowMs: number;
  /** Above 0: a healthy step ends after this many canary calls instead of `stepWindowMs` (the quiet-canary limit stays 2 × `stepWindowMs`). */
  stepCalls: number;
  minSamples: number;
  maxErrorRateDelta: number;
  maxP95Ratio: number;
  minP95DeltaMs: number;
  tickMs: number;
  reverifyAfter: number;
  /** How long an idle or failed slot keeps its folder after it left service, ms (issue #29). */
  folderRetentionMs: number;
  /** A version called within this window keeps its folder, ms (covers other replicas' processes until their idle timeout). */
  recentCallMs: number;
  /** How often the folder sweep runs, ms; 0: never on a timer. */
  sweepIntervalMs: number;
}

/** The defaults of seed 000 §5.1: 10 % → 50 % → 100 %, five minutes per step. */
export const defaultRolloutSettings: RolloutSettings = Object.freeze({
  steps: Object.freeze([10, 50, 100]),
  stepWindowMs: 300_000,
  stepCalls: 0,
  minSamples: 20,
  maxErrorRateDelta: 0.1,
  maxP95Ratio: 2,
  minP95DeltaMs: 100,
  tickMs: 1000,
  reverifyAfter: 2,
  folderRetentionMs: 7 * 86_400_000,
  recentCallMs: 900_000,
  sweepIntervalMs: 3_600_000,
});

/** Calls of one slot over a window (from plugin_call_events). */
export interface SlotStats {
  calls: number;
  failures: number;
  /** Calls refused by an open breaker (error class `circuit_open`). */
  breakerOpen: number;
  /** Calls that found the plugin process gone (error class `unavailable`: crash, crash loop). */
  crashes: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/** A rollout with both of its slots, as status reads and the UI show it. */
export interface RolloutView {
  plugin: string;
  pluginId: string;
  rollout: Rollout | null;
  trafficPercent: number;
  slots: Deployment[];
  health: { stable: SlotStats; canary: SlotStats } | null;
  history: RolloutEvent[];
}

/** What is verified: the staged version with the launch spec of its canary slot. */
export interface StagedVerificationRequest {
  pluginId: string;
  pluginName: string;
  version: string;
  staged: StagedVersion;
  launch: UpstreamSpec;
  signal: AbortSignal;
}

/** What the verification found (from its signed, stored report). */
export interface StagedVerdict {
  trustLevel: TrustLevel;
  score: number;
  grade: string;
  caps: Array<{ stage: string; level: TrustLevel; reason: string }>;
  reportJobId: string;
}

/** Runs the verification pipeline on a staged version (the app wires the verification service). */
export type VerifyStaged = (request: StagedVerificationRequest) => Promise<StagedVerdict>;
