/**
 * @module runtime/supervisor/era
 * Connecting in the era a plugin speaks, remembered per plugin version (issue #24; MCP
 * 2026-07-28 basic/versioning: "Clients SHOULD cache the result for the lifetime of the server
 * process … re-probing if the cached assumption later fails"). The first connection finds the
 * era (`upstream-client.ts`); later ones go straight to it. When a start shows the other era (a
 * legacy plugin that exits on the `server/discover` probe, or a remembered legacy plugin whose
 * `initialize` is refused with a modern version list) the plugin is started once more in that era.
 */
import { isQuiverError } from '../../core/errors.ts';
import type { UpstreamSpec } from '../types.ts';
import type { ProtocolEra, UpstreamConnection } from '../upstream-connection.ts';
import type { Launcher, LaunchOptions } from './launcher.ts';
import type { Entry } from './state.ts';

/** The era a failed start showed, if any (`details.eraEvidence` of the start error). */
function eraEvidence(error: unknown): ProtocolEra | undefined {
  if (!isQuiverError(error)) return undefined;
  const evidence = (error.details as { eraEvidence?: unknown } | undefined)?.eraEvidence;
  return evidence === 'legacy' || evidence === 'modern' ? evidence : undefined;
}

/** The spec to launch: the entry's, with the era remembered for it (a spec that states its own era keeps it). */
export function specWithEra(entry: Pick<Entry, 'spec' | 'protocolEra'>): UpstreamSpec {
  if (entry.protocolEra === undefined || entry.spec.protocolEra !== undefined) return entry.spec;
  return { ...entry.spec, protocolEra: entry.protocolEra };
}

/** Launches (or reaches) the entry's plugin in its era, learning the era from the connection. */
export async function connectInEra(launcher: Pick<Launcher, 'connect'>, entry: Entry, options: LaunchOptions): Promise<UpstreamConnection> {
  let connection: UpstreamConnection;
  try {
    connection = await launcher.connect(specWithEra(entry), options);
  } catch (error) {
    const shown = eraEvidence(error);
    if (shown === undefined || shown === entry.protocolEra || options.signal?.aborted) throw error;
    entry.protocolEra = shown;
    connection = await launcher.connect(specWithEra(entry), options);
  }
  entry.protocolEra = connection.era;
  return connection;
}
