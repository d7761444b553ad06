/**
 * @module verification/subject
 * What a verification looks at, built from an installed plugin: its record (source as
 * installed, manifest), its code folder, its stored PID, its tools as the catalog holds them
 * (served name, title, description, schemas, annotations), the tool names of every other
 * installed plugin (for shadowing checks), and a launch spec forced to the strictest sandbox
 * (UNVERIFIED: no network, read-only code, limits), whatever trust the plugin has now.
 */
import { join } from 'node:path';
import { isQuiverError } from '../core/errors.ts';
import type { PluginService } from '../plugins/service.ts';
import type { UpstreamSpecInput } from '../runtime/types.ts';
import type { SubjectTool, VerificationSubject } from './types.ts';

/** The slice of the plugins service a subject is read from. */
export type SubjectSource = Pick<PluginService, 'show' | 'tools' | 'list' | 'upstreamSpec' | 'getIntelligence'>;

/**
 * The launch spec of the strictest sandbox: UNVERIFIED, no egress list (no network at all), and
 * the admin's host-folder grants read-only (issue #26): the plugin starts as it would (a
 * filesystem server needs its folder), but tools exercised with generated arguments never
 * write into the user's real folders.
 */
export function strictestLaunch(spec: UpstreamSpecInput): UpstreamSpecInput {
  if (spec.transport === 'stdio') {
    const { egress: _egress, ...rest } = spec;
    return { ...rest, trustLevel: 'UNVERIFIED', ...(rest.mounts === undefined ? {} : { mounts: rest.mounts.map((mount) => ({ ...mount, mode: 'ro' as const })) }) };
  }
  return { ...spec, trustLevel: 'UNVERIFIED' };
}

/**
 * The installed code folder: the package folder inside the install root (npm:
 * `node_modules/<package>`, git: the monorepo subfolder), the folder itself for a path install,
 * null for a remote plugin. `source.cachePath` stays the install root (npm: where
 * package-lock.json and node_modules are).
 */
export function codeDirOf(source: Record<string, unknown>): string | null {
  const root = typeof source['cachePath'] === 'string' ? source['cachePath'] : typeof source['path'] === 'string' ? source['path'] : null;
  if (root === null) return null;
  const packageFolder = typeof source['packageFolder'] === 'string' ? source['packageFolder'] : '.';
  return join(root, packageFolder);
}

async function otherToolNames(plugins: SubjectSource, except: string): Promise<string[]> {
  const names = new Set<string>();
  for (const plugin of await plugins.list()) {
    if (plugin.id === except || plugin.status !== 'active') continue;
    for (const tool of await plugins.tools(plugin.name)) names.add(tool.name);
  }
  return [...names].sort();
}

/** A launch spec, or null when the plugin cannot be started (remote-only sync plugin, missing credential). */
async function launchOf(plugins: SubjectSource, name: string): Promise<UpstreamSpecInput | null> {
  try {
    return strictestLaunch(await plugins.upstreamSpec(name));
  } catch (error) {
    if (isQuiverError(error, 'unavailable') || isQuiverError(error, 'missing_credential')) return null;
    throw error;
  }
}

/** Builds the subject of one installed plugin (by name or id). */
export async function buildSubject(plugins: SubjectSource, reference: string): Promise<VerificationSubject> {
  const { plugin } = await plugins.show(reference);
  const tools: SubjectTool[] = (await plugins.tools(plugin.name)).map((tool) => ({
    name: tool.name,
    ...(tool.displayName === null ? {} : { title: tool.displayName }),
    description: tool.description,
    inputSchema: tool.parameters,
    ...(tool.returnSchema === null ? {} : { outputSchema: tool.returnSchema }),
    ...(Object.keys(tool.annotations).length === 0 ? {} : { annotations: tool.annotations }),
  }));
  const intelligence = await plugins.getIntelligence(plugin.name).then(
    (record) => record.pid,
    (error: unknown) => {
      if (isQuiverError(error, 'not_found')) return null;
      throw error;
    },
  );
  return {
    pluginId: plugin.id,
    pluginName: plugin.name,
    version: plugin.version ?? 'local',
    sourceType: plugin.sourceType,
    source: plugin.source,
    codeDir: plugin.sourceType === 'url' || plugin.sourceType === 'sync' ? null : codeDirOf(plugin.source),
    manifest: plugin.manifest,
    intelligence,
    tools,
    otherToolNames: await otherToolNames(plugins, plugin.id),
    launch: plugin.status === 'active' ? await launchOf(plugins, plugin.name) : null,
  };
}

/** A version staged beside the installed one (issue #11 rollouts): what it ships, not what the catalog holds. */
export interface StagedSubjectInput {
  pluginId: string;
  pluginName: string;
  version: string;
  sourceType: VerificationSubject['sourceType'];
  source: Record<string, unknown>;
  manifest: Record<string, unknown> | null;
  /** The PID the staged version ships, when it ships one. */
  intelligence: Record<string, unknown> | null;
  /** The tools the staged version served at discovery. */
  tools: SubjectTool[];
  /** The staged version's own launch spec (the canary slot's); forced to the strictest sandbox here. */
  launch: UpstreamSpecInput;
}

/** Builds the subject of a staged version, verified before it takes traffic. */
export async function buildStagedSubject(plugins: SubjectSource, input: StagedSubjectInput): Promise<VerificationSubject> {
  return {
    pluginId: input.pluginId,
    pluginName: input.pluginName,
    version: input.version,
    sourceType: input.sourceType,
    source: input.source,
    codeDir: codeDirOf(input.source),
    manifest: input.manifest,
    intelligence: input.intelligence,
    tools: input.tools.map((tool) => ({
      name: tool.name,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    })),
    otherToolNames: await otherToolNames(plugins, input.pluginId),
    launch: strictestLaunch(input.launch),
  };
}
