/**
 * @module runtime/supervisor/discovery
 * One-shot discovery for installs and syncs: launch the plugin exactly as a call would
 * (sandboxed per trust), complete the handshake, list tools, resources and prompts, and stop
 * it again, all within one deadline. The connection is never pooled; the supervisor's close
 * stops one that is still running.
 */
import type { Clock, UpstreamSpecInput } from '../types.ts';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { listAllPrompts, listAllResources, listAllTools, type UpstreamConnection } from '../upstream-connection.ts';
import type { Discovery } from './api.ts';
import { classifyFailure } from './classify.ts';
import { createDeadline } from './deadline.ts';
import { connectInEra } from './era.ts';
import type { Launcher } from './launcher.ts';
import type { EntryRegistry } from './registry.ts';
import type { SupervisorSettings } from './settings.ts';
import type { Gate } from './state.ts';

/** Runs discoveries and tracks the ones under way. */
export interface Discoverer {
  discover(spec: UpstreamSpecInput, options?: { timeoutMs?: number }): Promise<Discovery>;
  /** Closes the connections of discoveries still under way. */
  close(): Promise<void>;
}

/** What discovery needs from the supervisor. */
export interface DiscovererOptions {
  settings: Pick<SupervisorSettings, 'startTimeoutMs' | 'defaultTimeoutMs'>;
  clock: Clock;
  gate: Gate;
  registry: Pick<EntryRegistry, 'resolve'>;
  launcher: Pick<Launcher, 'connect'>;
}

/**
 * Lists everything a connected plugin serves, as discovery reports it (without its duration):
 * a one-shot discovery's fresh process, or the running connection that announced a changed
 * tool list (issue #24: what it added at runtime exists only in its memory).
 */
export async function listEverything(made: UpstreamConnection, listOptions: { timeoutMs: number; signal?: AbortSignal }): Promise<Omit<Discovery, 'durationMs'>> {
  const warnings: string[] = [];
  // A server may answer resources/list or prompts/list with an error when they need its
  // backend (server-postgres lists tables, which a sandbox without its allow-list cannot
  // reach): its tools still install; the error is a warning. A crash still fails discovery.
  const orWarning = <T>(what: string, listing: Promise<T[]>): Promise<T[]> =>
    listing.catch((error: unknown) => {
      if (!(error instanceof McpError)) throw error;
      warnings.push(`${what} failed: ${error.message}`);
      return [];
    });
  const [tools, resources, prompts] = await Promise.all([
    made.client.getServerCapabilities()?.tools ? listAllTools(made.client, listOptions) : Promise.resolve([]),
    orWarning('resources/list', listAllResources(made.client, listOptions)),
    orWarning('prompts/list', listAllPrompts(made.client, listOptions)),
  ]);
  // Issue #24: a 2026-07-28 plugin may list a tool only to clients that declare what it uses.
  // Loaded here: it needs the v2 client's constants (issue #28: an idle server lists nothing).
  const { listClientRequirements } = await import('../client-requirements.ts');
  const clientRequirements = await listClientRequirements(made, tools, listOptions, warnings);
  return {
    serverInfo: made.client.getServerVersion(),
    capabilities: made.client.getServerCapabilities(),
    instructions: made.client.getInstructions(),
    tools,
    ...(Object.keys(clientRequirements).length > 0 ? { clientRequirements } : {}),
    resources,
    prompts,
    launch: made.launch,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** Creates the discoverer. */
export function createDiscoverer(options: DiscovererOptions): Discoverer {
  const { settings, clock, gate, registry, launcher } = options;
  const underWay = new Set<UpstreamConnection>();

  async function discover(specInput: UpstreamSpecInput, discoverOptions: { timeoutMs?: number } = {}): Promise<Discovery> {
    gate.ensureOpen();
    const entry = registry.resolve(specInput);
    const timeoutMs = discoverOptions.timeoutMs ?? settings.startTimeoutMs + settings.defaultTimeoutMs;
    const startedAt = clock.now();
    const deadline = createDeadline(entry.spec, 'discovery', timeoutMs, undefined, clock);
    let connection: UpstreamConnection | undefined;
    const connecting = connectInEra(launcher, entry, { redact: entry.redact, signal: deadline.signal, onLaunch: (description) => (entry.lastLaunch = description) })
      .then((made) => {
        connection = made;
        underWay.add(made);
        if (deadline.signal.aborted || gate.isClosed()) void made.close();
        return made;
      });
    try {
      const aborted = new Promise<never>((_, rejectPromise) => {
        const fail = (): void => rejectPromise(deadline.signal.reason);
        if (deadline.signal.aborted) fail();
        else deadline.signal.addEventListener('abort', fail, { once: true });
      });
      aborted.catch(() => undefined);
      const made = await Promise.race([connecting, aborted]);
      const listOptions = { timeoutMs: deadline.remaining() + 1_000, signal: deadline.signal };
      const listing = await Promise.race([listEverything(made, listOptions), aborted]);
      return { ...listing, durationMs: clock.now() - startedAt };
    } catch (error) {
      throw classifyFailure({ spec: entry.spec, redact: entry.redact, what: 'discovery', signal: deadline.signal }, error);
    } finally {
      deadline.dispose();
      connecting.catch(() => undefined);
      const made = connection ?? (await connecting.catch(() => undefined));
      if (made) {
        await made.close();
        underWay.delete(made);
      }
    }
  }

  return {
    discover,
    async close() {
      await Promise.all([...underWay].map((connection) => connection.close()));
    },
  };
}
