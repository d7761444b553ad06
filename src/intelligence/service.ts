/**
 * @module intelligence/service
 * The PID generation service (issue #14): generate a plugin's document from the sources asked
 * for, store it with provenance and input hashes, put its example requests into the catalog,
 * say whether a stored one is stale, and diff it against the plugin's current document. A
 * folder that is not installed can be generated from too (code and OpenAPI sources; nothing
 * stored). A failed generation (an LLM timeout, a 5xx, invalid output) throws before any
 * write: the previous document stays in place.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { invalidInput, notFound } from '../core/errors.ts';
import type { CatalogService } from '../catalog/index.ts';
import type { Database } from '../store/database.ts';
import { applyExampleRequests } from './apply.ts';
import { diffDocuments, type DocumentChange } from './diff.ts';
import type { ChatClient } from './llm/client.ts';
import { runPipeline, type PipelineResult } from './pipeline.ts';
import { currentPid, pluginInputs, type PluginReader } from './plugin-inputs.ts';
import { findGeneration, upsertGeneration, type GenerationRecord } from './repository.ts';
import { findAcceptance } from './acceptance-repository.ts';
import { acceptanceStatus, acceptGeneration, rejectGeneration, type AcceptanceStatus, type AcceptReport, type ReviewOptions } from './review.ts';
import { staleness, type StalenessReport } from './staleness.ts';
import type { LlmPrices } from './sources/llm.ts';
import type { GenerationInputs } from './types.ts';
import { parseSources } from './source-choice.ts';

export type { StalenessReport, AcceptReport, ReviewOptions, AcceptanceStatus };

/** What the service needs. */
export interface PidGenerationOptions {
  db: Database;
  plugins: PluginReader;
  catalog: Pick<CatalogService, 'updateTool'>;
  /** The LLM endpoint, when configured (QUIVER_LLM_*). */
  llm?: { client: ChatClient; prices?: LlmPrices | undefined } | undefined;
  now?: () => Date;
}

/** Options of one generation. */
export interface GenerateOptions {
  from?: readonly string[] | undefined;
  openApiPath?: string | undefined;
  /** Compute and report without storing or touching the catalog. */
  dryRun?: boolean | undefined;
}

/** A generation as reported to fronts. */
export interface GenerationReport extends Omit<PipelineResult, 'sources'> {
  plugin: string;
  stored: boolean;
  /** Catalog tools whose example queries changed. */
  updatedTools: number;
}

/** The service. */
export interface PidGenerationService {
  generate(plugin: string, options?: GenerateOptions): Promise<GenerationReport>;
  generateFromPath(path: string, options?: GenerateOptions): Promise<GenerationReport>;
  /**
   * After a plugin sync or update: regenerates its document when one was generated before,
   * with the same sources (LLM only when an endpoint is configured), reusing every source
   * whose inputs did not change; undefined when it was never generated.
   */
  refresh(plugin: string): Promise<GenerationReport | undefined>;
  get(plugin: string): Promise<GenerationRecord>;
  status(plugin: string): Promise<StalenessReport & { generationId: string | null; review: string | null; accepted: AcceptanceStatus }>;
  diff(plugin: string): Promise<{ plugin: string; against: 'current' | 'none'; generationId: string; accepted: AcceptanceStatus; changes: DocumentChange[] }>;
  /** Adopts the latest (or named) generation as the plugin's current PID (docs/metadata.md "Accepting"). */
  accept(plugin: string, options: ReviewOptions): Promise<AcceptReport>;
  /** Marks the latest (or named) generation rejected. */
  reject(plugin: string, options: ReviewOptions): Promise<GenerationRecord>;
}

const report = (plugin: string, result: PipelineResult, stored: boolean, updatedTools: number): GenerationReport => {
  const { sources: _sources, ...rest } = result;
  return { plugin, ...rest, stored, updatedTools };
};

/** Creates the PID generation service. */
export function createPidGenerationService(options: PidGenerationOptions): PidGenerationService {
  const { db, plugins, catalog } = options;
  const now = options.now ?? (() => new Date());

  // An accepted document is not the author's: generation merges over the document it replaced.
  const authorInputs = async (reference: string) => {
    const found = await pluginInputs(plugins, reference);
    if (found.inputs.author !== undefined && found.inputs.author.pid === undefined) {
      const replaced = (await findAcceptance(db, found.pluginId))?.replacedDocument ?? undefined;
      if (replaced !== undefined) found.inputs.author.pid = replaced;
    }
    return found;
  };

  const llmFor = () => ({ client: options.llm?.client, db, prices: options.llm?.prices, now });

  return {
    async generate(reference, generateOptions = {}) {
      const { sources, explicit } = parseSources(generateOptions.from);
      const { inputs, pluginId, name } = await authorInputs(reference);
      const previous = await findGeneration(db, pluginId);
      const result = await runPipeline(inputs, { from: sources, explicit, openApiPath: generateOptions.openApiPath, previous: previous?.sources, llm: llmFor() });
      if (generateOptions.dryRun === true) return report(name, result, false, 0);
      const { applied, updatedTools } = await applyExampleRequests(catalog, inputs.discovered ?? [], result.document, previous?.appliedExamples ?? {});
      await upsertGeneration(db, { pluginId, document: result.document, provenance: result.provenance, inputHashes: result.inputHashes, contentHash: result.contentHash, sources: result.sources, warnings: result.warnings, llmUsage: result.llmUsage, appliedExamples: applied, durationMs: result.durationMs }, now());
      return report(name, result, true, updatedTools);
    },

    async generateFromPath(path, generateOptions = {}) {
      const folder = resolve(path);
      const info = await stat(folder).catch(() => undefined);
      if (!info?.isDirectory()) throw invalidInput(`${path} is not a folder`);
      const { sources, explicit } = parseSources(generateOptions.from);
      const inputs: GenerationInputs = { pluginName: folder.split('/').filter(Boolean).pop() ?? 'plugin', codeDir: folder, discovered: undefined, author: undefined };
      const result = await runPipeline(inputs, { from: sources, explicit, openApiPath: generateOptions.openApiPath, llm: llmFor() });
      return report(inputs.pluginName, result, false, 0);
    },

    async refresh(reference) {
      const { plugin } = await plugins.show(reference);
      const previous = await findGeneration(db, plugin.id);
      if (previous === undefined) return undefined;
      const from = Object.keys(previous.inputHashes).filter((source) => source !== 'author' && (source !== 'llm' || options.llm !== undefined));
      return this.generate(plugin.name, { from: from.length > 0 ? from : undefined });
    },

    async get(reference) {
      const { plugin } = await plugins.show(reference);
      const record = await findGeneration(db, plugin.id);
      if (record === undefined) throw notFound('generated intelligence document of plugin', plugin.name);
      return record;
    },

    async status(reference) {
      const { inputs, pluginId, name } = await authorInputs(reference);
      const stored = await findGeneration(db, pluginId);
      const current = await currentPid(plugins, name);
      const accepted = await acceptanceStatus(db, pluginId, stored, current?.hash);
      return { ...(await staleness(name, inputs, stored)), generationId: stored?.id ?? null, review: stored?.review ?? null, accepted };
    },

    async diff(reference) {
      const record = await this.get(reference);
      const current = await currentPid(plugins, record.pluginName);
      const accepted = await acceptanceStatus(db, record.pluginId, record, current?.hash);
      return { plugin: record.pluginName, against: current === undefined ? 'none' : 'current', generationId: record.id, accepted, changes: diffDocuments(current?.pid, record.document, record.provenance) };
    },

    accept(reference, reviewOptions) {
      return acceptGeneration({ db, plugins, now, status: (name) => this.status(name) }, reference, reviewOptions);
    },

    reject(reference, reviewOptions) {
      return rejectGeneration({ db, plugins, now }, reference, reviewOptions);
    },
  };
}
