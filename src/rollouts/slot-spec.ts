/**
 * @module rollouts/slot-spec
 * The runtime spec of a canary slot: the active slot's spec (its credentials, settings,
 * effective trust and egress allow-list) with the staged version's launch, folder, version
 * label and execution profile (timeouts, retries, breaker, limits from the intelligence
 * document the staged version ships; the active slot's profile when it ships none). The label (`<version>+<slot>`) gives the slot its own supervisor
 * entry (own processes, breakers and crash record) and marks its call events; a stdio slot
 * gets its own state folder so two versions never share one writable overlay.
 */
import { buildUpstreamSpec } from '../plugins/installer.ts';
import type { StoredLaunch } from '../plugins/launch.ts';
import type { StagedVersion } from '../plugins/service.ts';
import { executionFromPid } from '../runtime/execution-profile.ts';
import { pluginStateDir } from '../runtime/state-dir.ts';
import { parseUpstreamSpec, type UpstreamSpec } from '../runtime/types.ts';
import type { Slot } from './types.ts';

/** The version label of a canary slot's processes and call events. */
export function canaryRuntimeVersion(version: string, slot: Slot): string {
  return `${version}+${slot}`;
}

/**
 * The canary's execution profile: the staged version's own PID when it ships one (the version
 * under test runs with the timeouts and breaker its authors declared for it), else the active
 * slot's. Install already refused a shipped PID the runtime cannot apply.
 */
export function canaryExecution(stable: UpstreamSpec, staged: Pick<StagedVersion, 'shippedPid'>): UpstreamSpec['execution'] {
  return staged.shippedPid === undefined || staged.shippedPid === null ? stable.execution : executionFromPid(staged.shippedPid);
}

/** Builds the canary's spec from the active slot's. */
export function canarySpec(stable: UpstreamSpec, staged: StagedVersion, slot: Slot, runtimeVersion: string, stateRoot: string | undefined): UpstreamSpec {
  const launch = staged.fields.launch as unknown as StoredLaunch | null;
  if (launch === null) throw new Error(`the staged version of '${stable.pluginName}' has no launch`);
  const headers = stable.transport === 'http' ? stable.headers : {};
  const env = stable.transport === 'stdio' ? stable.env : {};
  // The active slot's folder is not the canary's: keep only the shared read-only folders (node_modules of the hub, …).
  const shared = stable.transport === 'stdio' ? stable.readOnlyPaths.filter((path) => path !== stable.codeDir) : [];
  const built = buildUpstreamSpec({
    pluginId: stable.pluginId,
    pluginName: stable.pluginName,
    version: runtimeVersion,
    launch,
    root: staged.cachePath,
    env,
    headers,
    readOnlyPaths: shared,
    trustLevel: stable.trustLevel,
    ...(stateRoot === undefined ? {} : { stateDir: pluginStateDir(stateRoot, `${stable.pluginId}.${slot}`) }),
  });
  // The slot keeps the active slot's egress allow-list and host-path grants (issue #26).
  const carried = {
    execution: canaryExecution(stable, staged),
    ...(stable.transport === 'stdio' && stable.egress !== undefined ? { egress: stable.egress } : {}),
    ...(stable.transport === 'stdio' && built.transport === 'stdio' ? { mounts: stable.mounts } : {}),
  };
  return parseUpstreamSpec({ ...built, ...carried });
}
