/**
 * @module plugins/service/context
 * What every part of the plugins service shares: the database, catalog, supervisor, secret box,
 * logger and clock, the installer settings, and `changed` — the one place a committed write
 * reports itself to the `onChange` subscriber (the selection caches and the gateway's cached
 * launch specs), so invalidation follows from the writes instead of from a list of method names.
 */
import type { Logger } from '../../core/logger.ts';
import { silentLogger } from '../../core/logger.ts';
import { runOneShot, type OneShotRequest } from '../../runtime/one-shot.ts';
import type { TrustLevel } from '../../runtime/types.ts';
import type { Database } from '../../store/database.ts';
import type { InstallerSettings } from '../installer.ts';
import type { SecretBox } from '../secret-box.ts';
import type { PluginChangeEvent, PluginServiceOptions } from './types.ts';

/** The shared internals handed to each part of the service. */
export interface PluginContext {
  db: Database;
  catalog: PluginServiceOptions['catalog'];
  pinning: PluginServiceOptions['pinning'];
  supervisor: PluginServiceOptions['supervisor'];
  secrets: SecretBox;
  logger: Logger;
  now(): Date;
  /** The plugin cache root: only folders below it are ever deleted. */
  cacheDir: string;
  /** The supervisor's state root, when known (for `show`). */
  stateRoot: string | undefined;
  /** Trust level of plugins not yet verified. */
  trustLevel: TrustLevel;
  /** The hub's paths no host-path grant may touch (issue #26): home, data, key, cache, state. */
  protectedPaths: readonly string[];
  /** Effective trust and allow-list at launch (issue #10), when the trust service is wired. */
  launchTrust: PluginServiceOptions['launchTrust'];
  /** What every install hands to `prepareInstall`. */
  installer: InstallerSettings;
  /** Reports a committed write. Call it after the transaction, never before: a rollback must not invalidate. */
  changed(event: PluginChangeEvent): void;
}

/** Builds the shared context from the service options. */
export function createPluginContext(options: PluginServiceOptions): PluginContext {
  const { supervisor } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'plugins' });
  const trustLevel = options.defaultTrustLevel ?? 'UNVERIFIED';
  return {
    db: options.db,
    catalog: options.catalog,
    pinning: options.pinning,
    supervisor,
    secrets: options.secrets,
    logger,
    now: options.clock ?? (() => new Date()),
    cacheDir: options.cacheDir,
    stateRoot: options.stateRoot,
    trustLevel,
    protectedPaths: [...(options.protectedPaths ?? []), options.cacheDir, ...(options.stateRoot === undefined ? [] : [options.stateRoot])],
    launchTrust: options.launchTrust,
    installer: {
      cacheDir: options.cacheDir,
      discoverer: supervisor,
      discoveryTimeoutMs: options.discoveryTimeoutMs ?? 30_000,
      gitTimeoutMs: options.gitTimeoutMs ?? 120_000,
      npmTimeoutMs: options.npmTimeoutMs ?? 300_000,
      buildTimeoutMs: options.buildTimeoutMs ?? 300_000,
      // A git source's build runs the repository's code: in the sandbox of an UNVERIFIED plugin.
      runSandboxed: supervisor.host
        ? (request: OneShotRequest) =>
            runOneShot(request, { host: supervisor.host!(), dangerouslyAllowUnsandboxed: options.dangerouslyAllowUnsandboxed ?? false })
        : undefined,
      npmCacheDir: options.npmCacheDir,
      commandEnv: options.commandEnv,
      readOnlyPaths: options.readOnlyPaths ?? [],
      trustLevel,
      checkRemoteUrl: options.checkRemoteUrl,
      fetchRemoteDocument: options.fetchRemoteDocument,
    },
    changed(event) {
      if (options.onChange === undefined) return;
      try {
        options.onChange(event);
      } catch (error) {
        // The write is committed; a failing subscriber must not make it look failed.
        logger.warn({ err: error, event }, 'plugins onChange subscriber threw');
      }
    },
  };
}
