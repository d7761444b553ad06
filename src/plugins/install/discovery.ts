/**
 * @module plugins/install/discovery
 * Step 5 of an install: start the server once (sandboxed per its trust level), list its tools,
 * resources and prompts, and stop it. A new plugin has no state folder yet, so discovery
 * writes into the staging folder, which goes with it (no `state/installing-<uuid>` is left
 * behind, issue #15). A server listing one tool name twice is refused.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ungrantedPathHint } from '../../runtime/host-mounts.ts';
import type { Discovery } from '../../runtime/supervisor.ts';
import type { StoredLaunch } from '../launch.ts';
import type { InstallerSettings, InstallRequest } from './types.ts';
import type { CredentialDelivery } from './credentials.ts';
import type { FailStep } from './failure.ts';
import { buildUpstreamSpec, folderBlockingSandbox } from './spec.ts';
import type { Staging } from './staging.ts';

/** What discovery found, with the tool names it registers. */
export interface DiscoveredPlugin {
  discovery: Discovery;
  registeredTools: string[];
  /**
   * A remote plugin that answered 401 at its first discovery (issue #27): installed without
   * tools until an authorization exists; the authorization's completion discovers them.
   */
  needsAuthorization?: { url: string; hint: string } | undefined;
}

/**
 * The `missing_credential` of a remote server whose 401 names its protected resource metadata
 * (an OAuth server, MCP authorization) while Quiver holds no authorization for it. A bare 401
 * (a server wanting a static credential) still fails the install.
 */
function needsOAuth(error: unknown): boolean {
  const details = (error as { code?: unknown; details?: { reason?: unknown; oauth?: unknown } } | undefined);
  return details?.code === 'missing_credential' && details.details?.reason === 'unauthorized' && details.details.oauth === true;
}

/** Starts the plugin once, lists everything, stops it; fails at `launch` or `discovery`. */
export async function discoverPlugin(input: {
  request: InstallRequest;
  settings: InstallerSettings;
  staging: Staging;
  fail: FailStep;
  version: string;
  launch: StoredLaunch;
  root: string | undefined;
  delivery: CredentialDelivery;
}): Promise<DiscoveredPlugin> {
  const { request, settings, fail, launch } = input;
  const stateDir = request.pluginId === undefined && launch.transport === 'stdio' ? join(await input.staging.ensure('discovery'), 'state') : undefined;
  const spec = buildUpstreamSpec({
    pluginId: request.pluginId ?? `installing-${randomUUID()}`,
    stateDir,
    pluginName: request.name,
    version: input.version,
    launch,
    root: input.root,
    env: input.delivery.env,
    headers: input.delivery.headers,
    readOnlyPaths: settings.readOnlyPaths,
    trustLevel: settings.trustLevel,
    mounts: request.mounts,
  });
  // Every level runs sandboxed as the unprivileged user (issue #23), so every level needs the way in.
  if (spec.transport === 'stdio') {
    const blocking = await folderBlockingSandbox(spec.cwd ?? settings.cacheDir);
    if (blocking !== undefined) {
      throw fail(
        'launch',
        `sandboxed plugins run as an unprivileged user, who cannot enter ${blocking} (no execute permission for others); ` +
          `set QUIVER_HOME to a folder outside it (e.g. /var/lib/quiver) or run: chmod o+x ${blocking}`,
      );
    }
  }
  if (spec.transport === 'http' && request.discoverAs !== undefined) spec.authorizationOwner = request.discoverAs;
  let discovery: Discovery;
  try {
    // A sync following the running process's own tools/list_changed takes that process's list (issue #24).
    discovery = request.announced !== undefined && request.announced.version === spec.version
      ? request.announced.discovery
      : await settings.discoverer.discover(spec, { timeoutMs: settings.discoveryTimeoutMs });
  } catch (error) {
    // A remote server that wants OAuth is installed as needing authorization, not refused: the
    // authorization needs the plugin to exist (UI button, per-user links). Only a first
    // discovery (or one still waiting): a sync of a working plugin whose grant lapsed keeps its tools.
    const waiting = request.previousSource === undefined || request.previousSource['needsAuthorization'] === true;
    if (spec.transport === 'http' && waiting && needsOAuth(error)) {
      const hint = `run 'quiver plugin authorize ${spec.url}' or press Connect on the plugin in the admin UI; its tools are discovered once it is authorized`;
      return {
        discovery: { serverInfo: undefined, capabilities: undefined, instructions: undefined, tools: [], resources: [], prompts: [], launch: undefined, durationMs: 0 },
        registeredTools: [],
        needsAuthorization: { url: spec.url, hint },
      };
    }
    const message = (error as Error).message;
    // Issue #26: a server that could not reach a host folder learns why: its sandbox shows none ungranted.
    const hint = spec.transport === 'stdio'
      ? ungrantedPathHint(message, { pluginName: request.name, mounts: request.mounts ?? [], cwd: spec.cwd, codeDir: spec.codeDir, readOnlyPaths: spec.readOnlyPaths ?? [], stateDir }, { installing: request.pluginId === undefined })
      : undefined;
    throw fail('discovery', hint === undefined ? message : `${message}\n${hint}`, { cause: error });
  }
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const tool of discovery.tools) (seen.has(tool.name) ? duplicates : seen).add(tool.name);
  if (duplicates.size > 0) {
    throw fail('discovery', `the server lists tool name${duplicates.size > 1 ? 's' : ''} ${[...duplicates].map((d) => `'${d}'`).join(', ')} more than once; tool names must be unique within a plugin`);
  }
  return { discovery, registeredTools: discovery.tools.map((tool) => tool.name) };
}
