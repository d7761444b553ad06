/**
 * @module runtime/supervisor/registry
 * The entries of the supervisor, one per plugin version (`pluginId@version`), found from a
 * spec. The same version arriving with other settings (rotated credentials, new limits, a new
 * PID) retires its old connections; its crash record and breakers stay. Rate limiters and
 * concurrency caps belong to the plugin: shared by its versions while their limits agree, new
 * when the limits change.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../core/logger.ts';
import { createCallWindow } from '../health.ts';
import { redactorForSpec } from '../redact.ts';
import { circuitBreakerConfigSchema, parseUpstreamSpec, type Clock, type UpstreamSpec, type UpstreamSpecInput } from '../types.ts';
import { createPluginBreakers } from './breakers.ts';
import type { SharedLimits } from '../replica-limits.ts';
import { createCallLimits, type CallLimits } from './call-limits.ts';
import { createCrashHistory } from './crash-history.ts';
import type { SupervisorSettings } from './settings.ts';
import { inUse, type Entry, type Instance } from './state.ts';

/** The supervisor's entries. */
export interface EntryRegistry {
  /** Parses the spec (once per input object) and returns its entry, made or updated as needed. */
  resolve(input: UpstreamSpecInput): Entry;
  /** Every version of a plugin. */
  forPlugin(pluginId: string): Entry[];
  all(): Entry[];
  /** Instances of every entry that are not stopping. */
  live(): Instance[];
}

/** What the registry needs from the supervisor. */
export interface RegistryOptions {
  settings: Pick<SupervisorSettings, 'breakerDefaults' | 'healthWindow' | 'backoff' | 'crashLoop'>;
  clock: Clock;
  logger: Logger;
  /** Stops an instance retired by a settings change. */
  stop(instance: Instance, why: string): Promise<void>;
  /** Replica-wide limiters for declared limits (issue #16); absent, every limit is in memory. */
  sharedLimits?: SharedLimits | undefined;
}

/** Creates an empty registry. */
export function createEntryRegistry(options: RegistryOptions): EntryRegistry {
  const { settings, clock, logger } = options;
  const entries = new Map<string, Entry>();
  const specs = new WeakMap<object, UpstreamSpec>();
  // Parsing and hashing on every call would cost more than the rest of the call path: both are
  // cached per object (callers pass the same spec object for every call of a plugin).
  const fingerprints = new WeakMap<UpstreamSpec, string>();
  // Limits are the plugin's, not a version's: every version and deployment slot with the same
  // declared limits shares one set of limiters, so a canary never doubles a limit (issue #16).
  const pluginLimits = new Map<string, { declared: string; limits: CallLimits }>();

  function limitsFor(spec: UpstreamSpec): CallLimits {
    const declared = JSON.stringify([spec.execution.rateLimits ?? null, spec.execution.concurrency ?? null]);
    const held = pluginLimits.get(spec.pluginId);
    if (held && held.declared === declared) return held.limits;
    const limits = createCallLimits(spec, clock, options.sharedLimits);
    pluginLimits.set(spec.pluginId, { declared, limits });
    return limits;
  }

  function parse(input: UpstreamSpecInput): UpstreamSpec {
    let spec = specs.get(input);
    if (!spec) {
      spec = parseUpstreamSpec(input);
      specs.set(input, spec);
    }
    return spec;
  }

  function fingerprintOf(spec: UpstreamSpec): string {
    let fingerprint = fingerprints.get(spec);
    if (fingerprint === undefined) {
      fingerprint = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
      fingerprints.set(spec, fingerprint);
    }
    return fingerprint;
  }

  function create(key: string, spec: UpstreamSpec, fingerprint: string): Entry {
    const entry: Entry = {
      key,
      spec,
      fingerprint,
      redact: redactorForSpec(spec),
      instances: [],
      crashes: createCrashHistory(() => entry.spec, settings, clock, logger),
      breakers: createPluginBreakers(circuitBreakerConfigSchema.parse({ ...settings.breakerDefaults, ...spec.execution.circuitBreakerConfig }), clock),
      limits: limitsFor(spec),
      window: createCallWindow(clock, settings.healthWindow.size, settings.healthWindow.ms),
      totals: { calls: 0, failures: 0 },
      annotations: undefined,
      lastLaunch: undefined,
      lastStartedAt: undefined,
    };
    return entry;
  }

  function update(entry: Entry, spec: UpstreamSpec, fingerprint: string): void {
    logger.info({ pluginId: spec.pluginId, version: spec.version }, 'plugin settings changed; recycling its connections');
    entry.spec = spec;
    entry.fingerprint = fingerprint;
    entry.redact = redactorForSpec(spec);
    entry.limits = limitsFor(spec);
    entry.annotations = undefined;
    for (const instance of [...entry.instances]) {
      instance.retire = true;
      if (!inUse(instance)) void options.stop(instance, 'settings changed');
    }
  }

  return {
    resolve(input) {
      const spec = parse(input);
      // Issue #27: a remote server may bind its session to the token's user, so each owner of an
      // authorization gets its own entry (and connections); idle ones close like any other.
      const owner = spec.transport === 'http' ? spec.authorizationOwner : undefined;
      const key = owner === undefined ? `${spec.pluginId}@${spec.version}` : `${spec.pluginId}@${spec.version}#${owner}`;
      const fingerprint = fingerprintOf(spec);
      const entry = entries.get(key);
      if (!entry) {
        const created = create(key, spec, fingerprint);
        entries.set(key, created);
        return created;
      }
      if (entry.fingerprint !== fingerprint) update(entry, spec, fingerprint);
      return entry;
    },
    forPlugin: (pluginId) => [...entries.values()].filter((entry) => entry.spec.pluginId === pluginId),
    all: () => [...entries.values()],
    live: () => [...entries.values()].flatMap((entry) => entry.instances.filter((instance) => instance.state !== 'stopping')),
  };
}
