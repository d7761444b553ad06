/**
 * @module plugins/service/mounts
 * Host folders as a declared permission (issue #26): an admin grants a plugin host paths,
 * read-only or read-write, recorded with who and why; the sandbox binds them at the same path
 * (runtime/sandbox.ts). A grant is checked here before anything is written — the path must
 * exist, is stored by its real path, and may not be, hold or sit inside one of the hub's own
 * paths (home, data folder, secret key, plugin cache and state: runtime/host-mounts.ts) — and
 * again at every launch. A change reports `mounts`: the gateway drops its cached launch spec and
 * the supervisor recycles the plugin's processes at its next call, which then start with the
 * new grants (or at once with `restart`).
 */
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { QuiverError, ErrorCodes, invalidInput } from '../../core/errors.ts';
import { protectedOverlap, protectedPathRefusal, type HostMount, type MountMode } from '../../runtime/host-mounts.ts';
import { deletePluginMount, listPluginMounts, upsertPluginMount, type PluginMountRow } from '../../store/repositories/plugin-mounts.ts';
import type { PluginRecord } from '../../store/repositories/plugins.ts';
import type { PluginContext } from './context.ts';
import { requirePlugin } from './records.ts';
import type { PluginService } from './types.ts';

/** The grant methods of the service. */
export type MountsPart = Pick<PluginService, 'grantMount' | 'revokeMount' | 'listMounts'>;

/** A grant checked against the host: its real path, and warnings about what the sandbox user may do there. */
export interface CheckedMount extends HostMount {
  warnings: string[];
}

/** The sandbox user's ('others') permission bits on a host path, when Quiver runs as root (sandbox.ts drops to uid 65534). */
async function sandboxUserWarnings(path: string, mode: MountMode, isDirectory: boolean): Promise<string[]> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    // Not root: the sandbox user maps to Quiver's own user, whose permissions apply.
    try {
      await access(path, mode === 'rw' ? constants.R_OK | constants.W_OK : constants.R_OK);
      return [];
    } catch {
      return [`${path} is not ${mode === 'rw' ? 'readable and writable' : 'readable'} by Quiver's user, whom the sandbox runs as`];
    }
  }
  const warnings: string[] = [];
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    if (((await stat(folder)).mode & 0o001) === 0) {
      warnings.push(`the sandbox runs as an unprivileged user (uid 65534), who cannot enter ${folder}: run 'chmod o+x ${folder}'`);
      break;
    }
    if (dirname(folder) === folder) break;
  }
  const bits = (await stat(path)).mode;
  const needed = (mode === 'rw' ? 0o006 : 0o004) | (isDirectory ? 0o001 : 0);
  if ((bits & needed) !== needed) {
    warnings.push(
      `the sandbox runs as an unprivileged user (uid 65534), who may not ${mode === 'rw' ? 'write' : 'read'} ${path}: ` +
        `run 'chmod o+${mode === 'rw' ? 'rw' : 'r'}${isDirectory ? 'x' : ''} ${path}' or 'chown 65534 ${path}'`,
    );
  }
  return warnings;
}

/** Checks one grant before it is stored or used for discovery: absolute, existing, clear of the hub's paths. */
export async function checkMount(context: PluginContext, path: string, mode: MountMode): Promise<CheckedMount> {
  if (!isAbsolute(path)) throw invalidInput(`host path '${path}' must be absolute`);
  // The hub's paths first: a path inside them is refused as such, whether it exists or not.
  const given = protectedOverlap(resolve(path), context.protectedPaths);
  if (given !== undefined) throw protectedPathRefusal(resolve(path), given);
  let real: string;
  let isDirectory: boolean;
  try {
    real = await realpath(resolve(path));
    isDirectory = (await stat(real)).isDirectory();
  } catch {
    throw invalidInput(`cannot grant ${path}: no such file or folder on this host`);
  }
  const hub = protectedOverlap(real, context.protectedPaths);
  if (hub !== undefined) throw protectedPathRefusal(real, hub);
  const warnings = await sandboxUserWarnings(real, mode, isDirectory);
  if (real !== resolve(path)) warnings.unshift(`${path} is a symbolic link: granted its real path ${real}`);
  return { path: real, mode, warnings };
}

/** Grants checked mounts to a plugin (after `checkMount`); true for each new or changed one. */
export async function storeMounts(context: PluginContext, pluginId: string, mounts: readonly HostMount[], by: { actor: string; reason?: string | undefined }): Promise<boolean> {
  let changed = false;
  for (const mount of mounts) {
    changed = (await upsertPluginMount(context.db, pluginId, { ...mount, reason: by.reason?.trim().slice(0, 1000) ?? '', actor: by.actor, createdAt: context.now() })) || changed;
  }
  return changed;
}

/** The grants a launch spec carries. */
export async function mountsOf(context: PluginContext, pluginId: string): Promise<HostMount[]> {
  return (await listPluginMounts(context.db, pluginId)).map((row) => ({ path: row.path, mode: row.mode }));
}

function requireLocal(record: PluginRecord): void {
  const transport = (record.launch as { transport?: string } | null)?.transport;
  if (transport === 'http' || transport === 'openapi') {
    throw invalidInput(`plugin '${record.name}' is a remote ${transport === 'http' ? 'MCP server' : 'API'}: it runs no process on this host to show a folder to`);
  }
}

/** Creates the grant part of the service. */
export function createMountsPart(context: PluginContext): MountsPart {
  const { logger } = context;
  return {
    async grantMount(reference, grant) {
      const record = await requirePlugin(context, reference);
      requireLocal(record);
      const checked = await checkMount(context, grant.path, grant.mode);
      const created = await storeMounts(context, record.id, [checked], grant);
      if (created) {
        logger.info({ plugin: record.name, path: checked.path, mode: checked.mode, actor: grant.actor }, 'host path granted');
        context.changed({ kind: 'mounts', pluginId: record.id });
      }
      if (grant.restart === true) await context.supervisor.stop?.(record.id).catch(() => undefined);
      const mount = (await listPluginMounts(context.db, record.id)).find((row) => row.path === checked.path)!;
      return { mount, created, warnings: checked.warnings };
    },

    async revokeMount(reference, path, revokeOptions = {}) {
      const record = await requirePlugin(context, reference);
      const stored = await listPluginMounts(context.db, record.id);
      // Given as granted, or by the path it was stored under (its real path).
      let target: PluginMountRow | undefined = stored.find((row) => row.path === resolve(path));
      if (target === undefined) {
        const real = await realpath(resolve(path)).catch(() => undefined);
        target = stored.find((row) => row.path === real);
      }
      if (target === undefined) return false;
      const deleted = await deletePluginMount(context.db, record.id, target.path);
      if (deleted) {
        logger.info({ plugin: record.name, path: target.path }, 'host path grant withdrawn');
        context.changed({ kind: 'mounts', pluginId: record.id });
      }
      if (revokeOptions.restart === true) await context.supervisor.stop?.(record.id).catch(() => undefined);
      return deleted;
    },

    async listMounts(reference) {
      return listPluginMounts(context.db, (await requirePlugin(context, reference, { includeRemoved: true })).id);
    },
  };
}

/** The refusal of a grant given to a plugin that cannot take one (used by `add`). */
export function mountsNeedLocalPlugin(sourceKind: string): QuiverError {
  return new QuiverError(ErrorCodes.invalidInput, `--mount applies to plugins that run on this host; a ${sourceKind} source is a remote server`);
}
