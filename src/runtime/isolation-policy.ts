/**
 * @module runtime/isolation-policy
 * Trust score → trust level → isolation policy, as pure functions (seed 000 §4.1, DESIGN §3.6,
 * issue #23). The policy says what the launcher must enforce here, on one machine:
 *
 * | level              | how it is reached                                   | sandbox (bubblewrap) | network    | resource limits |
 * |--------------------|-----------------------------------------------------|----------------------|------------|-----------------|
 * | UNVERIFIED         | score 0–39, an unfinished stage, a cap              | yes                  | none       | yes             |
 * | COMMUNITY          | score 40+ (the ceiling of automatic verification)   | yes                  | allow-list | yes             |
 * | ENTERPRISE         | an admin's recorded grant on a pinned source        | yes                  | allow-list | yes             |
 * | VERIFIED_PUBLISHER | the same, with publisher evidence or the admin's word | yes                | host       | no              |
 * | OFFICIAL           | the same, the admin's explicit choice                | yes                  | host       | no              |
 *
 * Every level is sandboxed (issue #23): no plugin process ever runs as root, keeps a
 * capability, sees the hub's environment, or sees the hub's home, data folder, key file or
 * another plugin's state, whatever its score or grant. What a higher level loosens is the
 * network (the host's, for VERIFIED_PUBLISHER and OFFICIAL) and the resource limits; a score
 * alone never loosens anything (`automaticTrustCeiling`).
 *
 * 'allow-list' is enforced (issue #10): the sandbox has its own network namespace and reaches
 * only the plugin's egress rules through the egress proxy (sandbox-egress.ts); with no rules it
 * reaches nothing. A VERIFIED_PUBLISHER or OFFICIAL plugin that has egress rules gets the
 * allow-list too: an admin who wrote rules wants them held.
 */
import type { ResourceLimits, TrustLevel } from './types.ts';

/** What a plugin process is allowed, derived from its trust level. */
export interface IsolationPolicy {
  level: TrustLevel;
  /** Run inside bubblewrap (filesystem, user, pid, ipc namespaces; cleared environment). True at every level since issue #23. */
  sandbox: boolean;
  /** 'none': own empty network namespace; 'allow-list': out only through the egress proxy; 'host': the host network. */
  network: 'none' | 'allow-list' | 'host';
  /** Resource limits applied through cgroups (or a Node heap flag where cgroups are missing). */
  limits: Required<ResourceLimits> | undefined;
}

/** Default limits for UNVERIFIED, COMMUNITY and ENTERPRISE plugins. */
export const defaultLimits: Required<ResourceLimits> = { memoryMb: 512, cpus: 1, pids: 128 };

/**
 * The highest level automatic verification (a score, a default) can give (issue #23): the one
 * that keeps a plugin sandboxed behind an egress allow-list. Above it only an admin's grant goes.
 */
export const automaticTrustCeiling: TrustLevel = 'COMMUNITY';

/** Maps a verification score (0–100) to the seed's trust band (seed 000 §4.1); the verdict caps it at `automaticTrustCeiling`. */
export function trustLevelForScore(score: number): TrustLevel {
  if (!Number.isFinite(score) || score < 40) return 'UNVERIFIED';
  if (score < 60) return 'COMMUNITY';
  if (score < 80) return 'ENTERPRISE';
  if (score < 95) return 'VERIFIED_PUBLISHER';
  return 'OFFICIAL';
}

/** Options of `isolationPolicyFor`. */
export interface IsolationOptions {
  /** The plugin has egress rules an admin set: hold it to them at every level above UNVERIFIED. */
  egressRules?: boolean;
}

/** Maps a trust level to its isolation policy; `limits` overrides the default limits field by field. */
export function isolationPolicyFor(level: TrustLevel, limits: ResourceLimits = {}, options: IsolationOptions = {}): IsolationPolicy {
  const merged: Required<ResourceLimits> = {
    memoryMb: limits.memoryMb ?? defaultLimits.memoryMb,
    cpus: limits.cpus ?? defaultLimits.cpus,
    pids: limits.pids ?? defaultLimits.pids,
  };
  switch (level) {
    case 'UNVERIFIED':
      return { level, sandbox: true, network: 'none', limits: merged };
    case 'COMMUNITY':
    case 'ENTERPRISE':
      return { level, sandbox: true, network: 'allow-list', limits: merged };
    case 'VERIFIED_PUBLISHER':
    case 'OFFICIAL':
      return { level, sandbox: true, network: options.egressRules ? 'allow-list' : 'host', limits: undefined };
  }
}
