/**
 * @module runtime/isolation-policy
 * Trust score → trust level → isolation policy, as pure functions (seed 000 §4.1, DESIGN §3.6).
 * The policy says what the launcher must enforce here, on one machine:
 *
 * | level              | sandbox (bubblewrap) | network | resource limits | process tree contained |
 * |--------------------|----------------------|---------|-----------------|------------------------|
 * | UNVERIFIED         | yes                  | none    | yes             | yes                    |
 * | COMMUNITY          | yes                  | allow-list | yes          | yes                    |
 * | ENTERPRISE         | no                   | host    | yes             | yes                    |
 * | VERIFIED_PUBLISHER | no                   | host    | no              | yes                    |
 * | OFFICIAL           | no                   | host    | no              | yes                    |
 *
 * 'allow-list' is enforced (issue #10): the sandbox has its own network namespace and reaches
 * only the plugin's egress rules through the egress proxy (sandbox-egress.ts); with no rules it
 * reaches nothing. An allow-list can only be enforced in a sandbox, so an ENTERPRISE or
 * VERIFIED_PUBLISHER plugin that has egress rules stays sandboxed (with its level's limits);
 * OFFICIAL is never sandboxed and its rules are not enforced.
 */
import type { ResourceLimits, TrustLevel } from './types.ts';

/** What a plugin process is allowed, derived from its trust level. */
export interface IsolationPolicy {
  level: TrustLevel;
  /** Run inside bubblewrap (filesystem, user, pid, ipc namespaces; cleared environment). */
  sandbox: boolean;
  /** 'none': own empty network namespace; 'allow-list': out only through the egress proxy; 'host': the host network. */
  network: 'none' | 'allow-list' | 'host';
  /** Resource limits applied through cgroups (or a Node heap flag where cgroups are missing). */
  limits: Required<ResourceLimits> | undefined;
}

/** Default limits for sandboxed and ENTERPRISE plugins. */
export const defaultLimits: Required<ResourceLimits> = { memoryMb: 512, cpus: 1, pids: 128 };

/** Maps a verification score (0–100) to a trust level (seed 000 §4.1). */
export function trustLevelForScore(score: number): TrustLevel {
  if (!Number.isFinite(score) || score < 40) return 'UNVERIFIED';
  if (score < 60) return 'COMMUNITY';
  if (score < 80) return 'ENTERPRISE';
  if (score < 95) return 'VERIFIED_PUBLISHER';
  return 'OFFICIAL';
}

/** Options of `isolationPolicyFor`. */
export interface IsolationOptions {
  /** The plugin has egress rules an admin set: keep it sandboxed below OFFICIAL so they are enforced. */
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
      return { level, sandbox: true, network: 'allow-list', limits: merged };
    case 'ENTERPRISE':
      if (options.egressRules) return { level, sandbox: true, network: 'allow-list', limits: merged };
      return { level, sandbox: false, network: 'host', limits: merged };
    case 'VERIFIED_PUBLISHER':
      if (options.egressRules) return { level, sandbox: true, network: 'allow-list', limits: undefined };
      return { level, sandbox: false, network: 'host', limits: undefined };
    case 'OFFICIAL':
      return { level, sandbox: false, network: 'host', limits: undefined };
  }
}
