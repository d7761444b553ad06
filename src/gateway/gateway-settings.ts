/**
 * @module gateway/gateway-settings
 * The gateway's tunables (`GatewayOptions`) and their defaults, resolved once into the
 * plain values the session parts read, so no part repeats a `?? default`.
 */
import { QUIVER_VERSION } from '../core/version.ts';
import type { AdmissionOptions } from './admission.ts';
import { DEFAULT_TOOLS_PAGE_SIZE } from './list-pages.ts';
import type { ExposureMode, SessionIdentity } from './backend.ts';
import { DEFAULT_GUARD_OPTIONS, type IterationGuardOptions } from './iteration-guard.ts';
import { DEFAULT_SEARCH_HISTORY_OPTIONS, type SearchHistoryOptions } from './search-history.ts';

/** Tunables of the gateway; every field has a default. */
export interface GatewayOptions {
  serverInfo?: { name: string; version: string };
  /** Exposure mode when neither the connection nor its workspace says (default `search`). */
  defaultExposureMode?: ExposureMode;
  /** Per-workspace configuration: the mode for an identity, or undefined for the default. */
  exposureModeFor?: (identity: SessionIdentity) => ExposureMode | undefined;
  /** Per-workspace native names (issue #12): true when the identity's workspace shows plugins' own names. */
  nativeNamesFor?: (identity: SessionIdentity) => boolean;
  /** Seed 004 §6: discovered-tool capacity (default 16) and TTL (default 30 min). */
  toolContext?: { capacity?: number; ttlMs?: number };
  search?: {
    /** Tools per search when the model does not say (default 5, seed 004 §4.4). */
    defaultLimit?: number;
    /** Most tools one search may return (default 20). */
    maxLimit?: number;
    /** Fewer internal results than this → marketplace suggestions (default 1, seed 004 §10). */
    marketplaceThreshold?: number;
    /** Most marketplace suggestions (default 3). */
    marketplaceLimit?: number;
    /** Redundant-search detection (seed 004 §8). */
    redundancy?: Partial<Omit<SearchHistoryOptions, 'now'>>;
  };
  /** Seed 004 §7: thresholds, exempt tools and tool-specific guidance (qualified name → text). */
  guard?: Partial<Omit<IterationGuardOptions, 'now'>> & { guidance?: Record<string, string> };
  sessions?: {
    /** Idle sessions are closed after this long (default 5 min). */
    idleTtlMs?: number;
    /** Most live sessions in all; beyond it new sessions are refused, never a live one closed (default 1,000). */
    maxSessions?: number;
    /** Most live sessions per owner key; beyond it the key's least recently active one closes (default 100). */
    maxSessionsPerKey?: number;
    /** Most live sessions per organisation; beyond it its least recently active one closes (default 250). */
    maxSessionsPerOrg?: number;
    /** How often idle sessions are swept (default 60 s or a fifth of the TTL, whichever is shorter; 0 disables the timer). */
    sweepIntervalMs?: number;
  };
  /** Bounded work (issue #18): searches running at once, waiting, and the longest wait before a refusal. */
  admission?: Partial<AdmissionOptions>;
  /** A search's outcome is recorded at the next search, at close, or after this long (default 5 min). */
  outcomeWindowMs?: number;
  /** Tools per `tools/list` page (default 500); a longer list comes with `nextCursor` (issue #24). */
  toolsPageSize?: number;
}

/** Defaults of the session limits and the admission bounds. */
export const DEFAULT_SESSION_LIMITS = Object.freeze({ idleTtlMs: 5 * 60_000, maxSessions: 1000, maxSessionsPerKey: 100, maxSessionsPerOrg: 250 });
export const DEFAULT_ADMISSION: Readonly<AdmissionOptions> = Object.freeze({ maxConcurrent: 64, maxQueued: 1024, maxWaitMs: 5_000 });

/** `GatewayOptions` with every default filled in. */
export interface GatewaySettings {
  serverInfo: { name: string; version: string };
  /** Discovered-tool capacity and TTL of a session's tool context. */
  capacity: number;
  ttlMs: number;
  defaultLimit: number;
  maxLimit: number;
  marketplaceThreshold: number;
  marketplaceLimit: number;
  redundancy: Omit<SearchHistoryOptions, 'now'>;
  guardOptions: Omit<IterationGuardOptions, 'now'>;
  /** Tool-specific loop guidance by qualified name. */
  specificGuidance: Record<string, string>;
  outcomeWindowMs: number;
  toolsPageSize: number;
  sessions: { idleTtlMs: number; maxSessions: number; maxSessionsPerKey: number; maxSessionsPerOrg: number; sweepIntervalMs: number };
  admission: AdmissionOptions;
  /** The exposure mode of a new session: the connection's, then its workspace's, then the default. */
  modeFor(identity: SessionIdentity): ExposureMode;
  /** Whether a new session shows tools, prompts and resources under their plugins' own names. */
  nativeNamesFor(identity: SessionIdentity): boolean;
}

/** Fills in the defaults of `GatewayOptions`. */
export function resolveGatewaySettings(settings: GatewayOptions = {}): GatewaySettings {
  const { guidance: specificGuidance = {}, ...guardSettings } = settings.guard ?? {};
  const idleTtlMs = settings.sessions?.idleTtlMs ?? DEFAULT_SESSION_LIMITS.idleTtlMs;
  return {
    serverInfo: settings.serverInfo ?? { name: 'quiver', version: QUIVER_VERSION },
    capacity: settings.toolContext?.capacity ?? 16,
    ttlMs: settings.toolContext?.ttlMs ?? 30 * 60_000,
    defaultLimit: settings.search?.defaultLimit ?? 5,
    maxLimit: settings.search?.maxLimit ?? 20,
    marketplaceThreshold: settings.search?.marketplaceThreshold ?? 1,
    marketplaceLimit: settings.search?.marketplaceLimit ?? 3,
    redundancy: { ...DEFAULT_SEARCH_HISTORY_OPTIONS, ...settings.search?.redundancy },
    guardOptions: { ...DEFAULT_GUARD_OPTIONS, ...guardSettings },
    specificGuidance,
    outcomeWindowMs: settings.outcomeWindowMs ?? 5 * 60_000,
    toolsPageSize: Math.max(1, settings.toolsPageSize ?? DEFAULT_TOOLS_PAGE_SIZE),
    sessions: {
      idleTtlMs,
      maxSessions: settings.sessions?.maxSessions ?? DEFAULT_SESSION_LIMITS.maxSessions,
      maxSessionsPerKey: settings.sessions?.maxSessionsPerKey ?? DEFAULT_SESSION_LIMITS.maxSessionsPerKey,
      maxSessionsPerOrg: settings.sessions?.maxSessionsPerOrg ?? DEFAULT_SESSION_LIMITS.maxSessionsPerOrg,
      sweepIntervalMs: settings.sessions?.sweepIntervalMs ?? Math.min(60_000, Math.max(1_000, Math.floor(idleTtlMs / 5))),
    },
    admission: { ...DEFAULT_ADMISSION, ...settings.admission },
    modeFor: (identity) => identity.exposureMode ?? settings.exposureModeFor?.(identity) ?? settings.defaultExposureMode ?? 'search',
    nativeNamesFor: (identity) => settings.nativeNamesFor?.(identity) ?? false,
  };
}
