/**
 * @module intelligence/review
 * Adopting or rejecting a generated PID (issue #14 follow-up). Accepting re-validates the
 * generation against the plugin's registered tools, refuses a stale one unless forced, and
 * in one transaction stores it as the plugin's current PID (origin `generated`, so it never
 * counts as author-written), records where it came from, and marks the generation accepted.
 * The catalog's example requests were already written when the generation was stored.
 */
import { ErrorCodes, invalidInput, notFound, QuiverError } from '../core/errors.ts';
import { assessPid, PID_SCHEMA_VERSION } from '../plugins/intelligence.ts';
import { executionFromPid } from '../runtime/execution-profile.ts';
import type { Database } from '../store/database.ts';
import { findIntelligence, upsertIntelligence, type IntelligenceRecord } from '../store/repositories/plugins.ts';
import { findAcceptance, setReview, upsertAcceptance, type AcceptanceRecord } from './acceptance-repository.ts';
import type { PluginReader } from './plugin-inputs.ts';
import { findGeneration, type GenerationRecord } from './repository.ts';
import type { StalenessReport } from './staleness.ts';

const conflict = (message: string): QuiverError => new QuiverError(ErrorCodes.conflict, message);

/** Who decides and which generation. */
export interface ReviewOptions {
  generationId?: string | undefined;
  /** Accept even when the generation's sources changed since. */
  force?: boolean | undefined;
  actor: string;
}

/** The result of an acceptance. */
export interface AcceptReport {
  plugin: string;
  generationId: string;
  contentHash: string;
  documentHash: string;
  acceptedBy: string;
  acceptedAt: Date;
  forced: boolean;
  staleSources: string[];
  validationStatus: string;
  warnings: string[];
}

async function namedGeneration(db: Database, plugins: PluginReader, reference: string, generationId: string | undefined): Promise<GenerationRecord> {
  const { plugin } = await plugins.show(reference);
  const record = await findGeneration(db, plugin.id);
  if (record === undefined) throw notFound('generated intelligence document of plugin', plugin.name);
  // Only the latest generation is stored; an older id is refused rather than silently swapped.
  if (generationId !== undefined && generationId !== record.id) {
    throw conflict(`generation ${generationId} is not the latest of ${plugin.name} (the latest is ${record.id}); only the latest can be reviewed`);
  }
  return record;
}

/** Accepts the latest (or named) generation as the plugin's current PID. */
export async function acceptGeneration(
  deps: { db: Database; plugins: PluginReader; now: () => Date; status: (plugin: string) => Promise<StalenessReport> },
  reference: string,
  options: ReviewOptions,
): Promise<AcceptReport> {
  const { db, plugins } = deps;
  const record = await namedGeneration(db, plugins, reference, options.generationId);
  if (record.review === 'rejected') throw conflict(`generation ${record.id} of ${record.pluginName} was rejected by ${record.reviewedBy ?? 'an admin'}; generate again to review a new one`);
  const status = await deps.status(record.pluginName);
  if (status.stale && options.force !== true) {
    throw conflict(`generation ${record.id} of ${record.pluginName} is stale (changed: ${status.staleSources.join(', ')}); run 'quiver pid generate ${record.pluginName}' again, or accept it anyway with --force`);
  }
  const registeredTools = (await plugins.tools(record.pluginName)).map((tool) => tool.name);
  const assessment = assessPid(record.document, { pluginName: record.pluginName, registeredTools });
  if (!assessment.validation.valid) {
    throw invalidInput(`generation ${record.id} of ${record.pluginName} no longer validates: ${assessment.validation.errors.join(' ')}`, { errors: assessment.validation.errors });
  }
  // As for an admin PUT (issue #11): an execution profile the runtime cannot apply is refused now, not at the next call.
  executionFromPid(record.document);
  const { plugin } = await plugins.show(record.pluginName);
  const acceptedAt = deps.now();
  const acceptance: AcceptanceRecord = {
    generationId: record.id, generationHash: record.contentHash, documentHash: assessment.contentHash, acceptedBy: options.actor, acceptedAt,
    forced: status.stale, replacedDocument: null, replacedOrigin: null,
  };
  let replaced: IntelligenceRecord | undefined;
  await db.transaction(async (tx) => {
    const previous = await findIntelligence(tx, record.pluginId);
    replaced = previous;
    if (previous !== undefined && previous.origin !== 'generated') {
      acceptance.replacedDocument = previous.pid;
      acceptance.replacedOrigin = previous.origin;
    }
    const document = record.document;
    await upsertIntelligence(tx, {
      pluginId: record.pluginId, version: plugin.version ?? 'local', pid: document,
      schemaVersion: typeof document['version'] === 'string' ? document['version'].slice(0, 20) : PID_SCHEMA_VERSION,
      contentHash: assessment.contentHash, validationStatus: assessment.status, validationScore: assessment.score,
      validationErrors: assessment.validation.errors, validationWarnings: assessment.validation.warnings, origin: 'generated',
    }, acceptedAt);
    await upsertAcceptance(tx, record.pluginId, acceptance);
    // A generation replaced meanwhile (a sync's background refresh) must not be marked accepted in its place.
    if (!(await setReview(tx, record.id, 'accepted', options.actor, acceptedAt))) throw conflict(`generation ${record.id} of ${record.pluginName} was replaced while accepting; review the new one`);
  });
  // The execution profile is part of how the plugin runs: a changed one reaches its next launch.
  await plugins.intelligenceStored(record.pluginName, replaced);
  return {
    plugin: record.pluginName, generationId: record.id, contentHash: record.contentHash, documentHash: assessment.contentHash, acceptedBy: options.actor,
    acceptedAt, forced: status.stale, staleSources: status.staleSources, validationStatus: assessment.status, warnings: assessment.validation.warnings,
  };
}

/** Marks the latest (or named) generation rejected; it stays stored until the next generation. */
export async function rejectGeneration(deps: { db: Database; plugins: PluginReader; now: () => Date }, reference: string, options: ReviewOptions): Promise<GenerationRecord> {
  const record = await namedGeneration(deps.db, deps.plugins, reference, options.generationId);
  if (record.review === 'accepted') throw conflict(`generation ${record.id} of ${record.pluginName} is already the accepted document; PUT another document or accept a new generation`);
  await setReview(deps.db, record.id, 'rejected', options.actor, deps.now());
  return (await findGeneration(deps.db, record.pluginId))!;
}

/** How the plugin's current PID relates to its accepted and newest generations. */
export interface AcceptanceStatus {
  /** The current PID is the accepted generation (its hash still matches). */
  currentIsAccepted: boolean;
  acceptance: AcceptanceRecord | null;
  /** The newest generation is the one accepted. */
  newestIsAccepted: boolean;
}

/** The acceptance state of a plugin, for status and diff. */
export async function acceptanceStatus(db: Database, pluginId: string, newest: GenerationRecord | undefined, currentHash: string | undefined): Promise<AcceptanceStatus> {
  const acceptance = (await findAcceptance(db, pluginId)) ?? null;
  const currentIsAccepted = acceptance !== null && currentHash !== undefined && acceptance.documentHash === currentHash;
  return { currentIsAccepted, acceptance, newestIsAccepted: currentIsAccepted && newest !== undefined && newest.id === acceptance.generationId };
}
