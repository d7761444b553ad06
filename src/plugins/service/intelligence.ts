/**
 * @module plugins/service/intelligence
 * Plugin Intelligence Documents (seed 000 §6.3) as the service stores them: generated from the
 * catalog's tools and the manifest, written by an admin (hard errors reject it), shipped in
 * quiver.json (stored as assessed, at install), exported and searched lexically.
 */
import { invalidInput, notFound } from '../../core/errors.ts';
import { validateManifest, type PluginManifest } from '../../core/manifest.ts';
import type { Queryable } from '../../store/database.ts';
import { findIntelligence, listIntelligence, upsertIntelligence, type IntelligenceRecord, type PluginRecord } from '../../store/repositories/plugins.ts';
import { assessPid, generatePid, pidSearchFields, PID_SCHEMA_VERSION, PID_SEARCH_FIELDS, type PidAssessment } from '../intelligence.ts';
import { executionFromPid } from '../../runtime/execution-profile.ts';
import { lexicalSearch } from '../lexical-search.ts';
import type { PluginContext } from './context.ts';
import { allTools, requirePlugin } from './records.ts';
import type { PluginService } from './types.ts';

/** The intelligence methods of the service. */
export type IntelligencePart = Pick<
  PluginService,
  'getIntelligence' | 'generateIntelligence' | 'putIntelligence' | 'exportIntelligence' | 'intelligenceStored' | 'searchIntelligence'
>;

/** Stores a PID with its assessment (the one row per plugin is replaced). */
export async function storeAssessedPid(
  context: PluginContext,
  queryable: Queryable,
  input: { pluginId: string; version: string; document: Record<string, unknown>; assessment: PidAssessment; origin: IntelligenceRecord['origin'] },
): Promise<void> {
  const { document, assessment } = input;
  await upsertIntelligence(
    queryable,
    {
      pluginId: input.pluginId,
      version: input.version,
      pid: document,
      schemaVersion: typeof document['version'] === 'string' ? document['version'].slice(0, 20) : PID_SCHEMA_VERSION,
      contentHash: assessment.contentHash,
      validationStatus: assessment.status,
      validationScore: assessment.score,
      validationErrors: assessment.validation.errors,
      validationWarnings: assessment.validation.warnings,
      origin: input.origin,
    },
    context.now(),
  );
}

/** The execution settings of the stored PID, as JSON; undefined when none can be applied. */
function executionOf(record: IntelligenceRecord | undefined): string | undefined {
  try {
    return JSON.stringify(executionFromPid(record?.pid));
  } catch {
    return undefined;
  }
}

/**
 * What a generated document keeps of the one it replaces: the execution profile and the
 * safety section (timeouts, retries, breaker, rate limits, concurrency) are an author's or an
 * operator's decisions that tools and manifests cannot tell, and the runtime applies them.
 */
function runtimeSections(previous: Record<string, unknown> | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const section of ['execution', 'safety'] as const) {
    const value = previous?.[section];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) kept[section] = value;
  }
  return kept;
}

/** Validates a PID against the plugin's registered tools, stores it, returns the stored row; hard errors reject it. */
async function storeValidPid(context: PluginContext, record: PluginRecord, document: Record<string, unknown>, origin: IntelligenceRecord['origin']): Promise<IntelligenceRecord> {
  const registeredTools = (await allTools(context, record.id)).map((tool) => tool.name);
  const assessment = assessPid(document, { pluginName: record.name, registeredTools });
  if (!assessment.validation.valid) {
    throw invalidInput(`the intelligence document has ${assessment.validation.errors.length} error(s): ${assessment.validation.errors.join(' ')}`, {
      errors: assessment.validation.errors,
      warnings: assessment.validation.warnings,
    });
  }
  // Issue #11: a profile the runtime cannot apply is refused here, not at the plugin's next call.
  const execution = JSON.stringify(executionFromPid(document));
  const previous = await findIntelligence(context.db, record.id);
  await storeAssessedPid(context, context.db, { pluginId: record.id, version: record.version ?? 'local', document, assessment, origin });
  // The execution profile is part of how the plugin runs: cached launch specs must be rebuilt.
  if (execution !== executionOf(previous)) context.changed({ kind: 'settings', pluginId: record.id });
  return (await findIntelligence(context.db, record.id))!;
}

/** Creates the intelligence part of the service. */
export function createIntelligencePart(context: PluginContext): IntelligencePart {
  const { db } = context;
  return {
    async getIntelligence(reference) {
      const record = await requirePlugin(context, reference);
      const document = await findIntelligence(db, record.id);
      if (document === undefined) throw notFound('intelligence document of plugin', record.name);
      return document;
    },

    async generateIntelligence(reference) {
      const record = await requirePlugin(context, reference);
      let manifest: PluginManifest | undefined;
      if (record.manifest !== null) manifest = validateManifest(record.manifest, { pluginName: record.name }).manifest;
      const document = generatePid({ pluginName: record.name, manifest, description: record.description, tools: await allTools(context, record.id) });
      const previous = await findIntelligence(db, record.id);
      return storeValidPid(context, record, { ...document, ...runtimeSections(previous?.pid) }, 'generated');
    },

    async putIntelligence(reference, document) {
      const record = await requirePlugin(context, reference);
      if (document === null || typeof document !== 'object' || Array.isArray(document)) throw invalidInput('an intelligence document is a JSON object');
      return storeValidPid(context, record, document as Record<string, unknown>, 'admin');
    },

    exportIntelligence: () => listIntelligence(db),

    async intelligenceStored(reference, previous) {
      const record = await requirePlugin(context, reference);
      const stored = await findIntelligence(db, record.id);
      if (executionOf(stored) !== executionOf(previous)) context.changed({ kind: 'settings', pluginId: record.id });
    },

    async searchIntelligence(query, limit = 10) {
      const documents = await listIntelligence(db);
      return lexicalSearch(
        documents.map((document) => ({ item: document, fields: pidSearchFields(document.pluginName, document.pid) })),
        PID_SEARCH_FIELDS,
        query,
        limit,
      ).map((hit) => ({ plugin: hit.item.pluginName, score: hit.score, document: hit.item }));
    },
  };
}
