/**
 * @module trust/types
 * The trust service's public shapes (issue #10): effective trust of a plugin, admin grants,
 * egress rules and decisions, user reports and the runtime score.
 */
import type { Logger } from '../core/logger.ts';
import type { EgressRule } from '../runtime/egress-proxy.ts';
import type { PluginEgressDecision } from '../runtime/supervisor/api.ts';
import type { TrustLevel } from '../runtime/types.ts';
import type { Database } from '../store/database.ts';
import type { EgressDecisionRow, EgressRuleRow, RuntimeTrustRow, TrustGrantRow, UserReportRow } from '../store/repositories/trust.ts';
import type { EffectiveTrust } from './effective.ts';

/** Dynamic trust and ranking settings (QUIVER_TRUST_* in config.ts). */
export interface TrustSettings {
  /** A runtime score below this lowers the effective level at the next start (0–100). */
  runtimeThreshold: number;
  /** Window of behaviour the runtime score reads, ms. */
  windowMs: number;
  /** Calls needed in the window before error rate and latency variance count. */
  minCalls: number;
  /** Evaluate every plugin this often, ms; 0: only on demand. */
  evaluateIntervalMs: number;
  /** Egress decisions are kept this many days. */
  egressLogDays: number;
  /** Tools of plugins below this level rank lower (ranking factor < 1). */
  rankingFullFrom: TrustLevel;
}

export const defaultTrustSettings: TrustSettings = {
  runtimeThreshold: 50,
  windowMs: 24 * 3_600_000,
  minCalls: 10,
  evaluateIntervalMs: 300_000,
  egressLogDays: 14,
  rankingFullFrom: 'COMMUNITY',
};

/** Who made a change: an API key (`key:<id>:<name>`) or `cli`. */
export type Actor = string;

/** Everything known about one plugin's trust. */
export interface TrustView {
  plugin: { id: string; name: string };
  verified: { score: number | null; level: TrustLevel | null };
  grant: TrustGrantRow | null;
  runtime: RuntimeTrustRow | null;
  effective: EffectiveTrust;
  /** How the plugin is contained at its next start. */
  isolation: { sandbox: boolean; network: 'none' | 'allow-list' | 'host' };
  egressRules: number;
  /** Multiplier (≤ 1) applied to its tools' ranking. */
  rankingFactor: number;
  history: TrustGrantRow[];
}

/** What the launch of a plugin gets from trust. */
export interface LaunchTrust {
  trustLevel: TrustLevel;
  /** The allow-list (possibly empty) for a sandboxed level; undefined where none applies. */
  egress: EgressRule[] | undefined;
}

export interface TrustChange {
  kind: 'grant' | 'egress' | 'runtime';
  pluginId: string;
  /** For 'runtime': true when the plugin fell below the threshold (re-sandbox it now), false when it recovered. */
  belowThreshold?: boolean;
}

export interface TrustServiceOptions {
  db: Database;
  logger?: Logger;
  clock?: () => Date;
  settings?: Partial<TrustSettings>;
  /** Level of plugins never verified (QUIVER default: UNVERIFIED). */
  defaultLevel?: TrustLevel;
  /** Told after each committed change that alters how a plugin starts (drop cached specs). */
  onChange?: (change: TrustChange) => void;
  /** Queues a re-verification (the verification job queue, when wired). */
  requestReverification?: (pluginId: string, reason: string) => Promise<void> | void;
}

export interface TrustService {
  view(reference: string): Promise<TrustView>;
  launchTrust(pluginId: string): Promise<LaunchTrust>;
  setTrust(reference: string, change: { kind: 'grant' | 'cap' | 'clear'; level?: TrustLevel | undefined; reason: string; actor: Actor }): Promise<TrustView>;
  allow(reference: string, target: string, options: { reason?: string; actor: Actor }): Promise<{ rule: EgressRuleRow; created: boolean }>;
  deny(reference: string, target: string): Promise<boolean>;
  egress(reference: string, options?: { limit?: number }): Promise<{ plugin: { id: string; name: string }; rules: EgressRuleRow[]; decisions: EgressDecisionRow[]; enforced: boolean; level: TrustLevel; remote: boolean }>;
  recordDecision(decision: PluginEgressDecision): void;
  report(reference: string, options: { reason: string; actor: Actor }): Promise<{ report: UserReportRow; runtime: RuntimeTrustRow }>;
  /** Recomputes runtime trust (one plugin or all); crossing the threshold restarts more isolated and queues re-verification. */
  evaluate(reference?: string): Promise<RuntimeTrustRow[]>;
  /** The ranking factor of a plugin's tools (sync, from the last refresh). */
  rankingFactor(pluginId: string): number;
  start(): void;
  close(): Promise<void>;
}
