/**
 * @module trust/pinning/service
 * Tool pinning (issue #10, DESIGN §3.7): the plugins service screens every listing of a
 * plugin's tools (install, update, sync) through `screen` and writes the plan with `apply` in
 * its commit transaction; quarantined tools are hidden from selection by the candidates query
 * (tool_pins) and refused by the gateway backend (`quarantineOf`); `approve` and `pinVerified`
 * lift quarantines. `onChange` fires after every committed change of what is quarantined, so
 * the selection caches of every replica drop the tool (the catalog rows may not change at all).
 */
import { QuiverError, ErrorCodes, invalidInput, notFound } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { silentLogger } from '../../core/logger.ts';
import type { CatalogService } from '../../catalog/service.ts';
import type { Database, Queryable } from '../../store/database.ts';
import { isUuid } from '../../store/repositories/mapping.ts';
import { findPluginRecordById, findPluginRecordByName, type PluginRecord } from '../../store/repositories/plugins.ts';
import {
  deleteToolPins, findQuarantinedTool, isToolQuarantined, listQuarantinedTools, listToolPins, upsertToolPins,
  type PinSource, type QuarantinedToolRecord,
} from '../../store/repositories/tool-pins.ts';
import { approvedPins, catalogEntries } from './approval.ts';
import type { ToolDefinition } from './definition.ts';
import { diffDefinitions, type PartDiff } from './diff.ts';
import { planPins, planServed, type PinPlan, type ServedListing } from './plan.ts';

/** A quarantined tool as the API, CLI and UI show it. */
export interface QuarantinedTool {
  plugin: string;
  pluginId: string;
  tool: string;
  reason: string;
  quarantinedAt: string;
  /** 'changed' (differs from its approved definition) or 'new' (never approved). */
  kind: 'changed' | 'new';
  approved: { definition: ToolDefinition; by: string | null; at: string | null; source: PinSource | null } | null;
  served: ToolDefinition;
  diff: PartDiff[];
}

/** The result of an approval. */
export interface ApprovalResult {
  plugin: string;
  approved: string[];
  by: string;
  source: PinSource;
}

/** What the pinning service needs. */
export interface PinningServiceOptions {
  db: Database;
  /** Approved entries reach the catalog through its differential sync. */
  catalog: Pick<CatalogService, 'syncPlugin'>;
  logger?: Logger;
  clock?: () => Date;
  /** Called after a committed change of what is quarantined. */
  onChange?: () => void;
}

/** The pinning service. */
export interface PinningService {
  /** Decides the pins and catalog entries of a plugin's listing (reads only). */
  screen(listing: ServedListing, options: { pluginName: string; firstDiscovery: boolean }): Promise<PinPlan>;
  /** Writes a plan inside the caller's transaction. */
  apply(queryable: Queryable, plan: PinPlan): Promise<void>;
  /** Reports a committed plan (drops the selection caches when quarantines changed). */
  committed(plan: PinPlan): void;
  /**
   * Screens the tools a running plugin serves against its pins (a restarted process may serve
   * something else than was discovered): differing ones are quarantined; resolves to the names
   * now quarantined among the served ones.
   */
  screenServed(plugin: { pluginId: string; pluginName: string }, definitions: readonly ToolDefinition[]): Promise<string[]>;
  /** Quarantined tools with their diffs, of one plugin (name or id) or of all. */
  quarantined(plugin?: string): Promise<QuarantinedTool[]>;
  /** The quarantine of a plugin tool, or undefined when it is served normally. */
  quarantineOf(pluginName: string, toolName: string): Promise<QuarantinedToolRecord | undefined>;
  /** True when the tool's pin is quarantined, or the tool is unknown or deleted (fail closed); one read, never cached. */
  isToolQuarantined(toolId: string): Promise<boolean>;
  /** Approves the served definitions of quarantined tools (all of the plugin's when none are named). */
  approve(plugin: string, toolNames: readonly string[], by: string): Promise<ApprovalResult>;
  /**
   * A passed verification re-pins (issue #10): every tool whose verified definition hash (the
   * report's `subject.toolHashes`) is the one it serves is approved by `verification`; a tool
   * served differently from what was verified stays as it is.
   */
  pinVerified(pluginId: string, verifiedHashes: Readonly<Record<string, string>>): Promise<ApprovalResult>;
}

/** The refusal of a call to a quarantined tool (`quarantined`, with the reason and how to approve). */
export function quarantinedError(qualifiedName: string, record: Pick<QuarantinedToolRecord, 'quarantineReason' | 'pluginName' | 'toolName'>): QuiverError {
  return new QuiverError(ErrorCodes.quarantined, `tool '${qualifiedName}' is quarantined: ${record.quarantineReason ?? 'its definition changed since approval'}`, {
    details: { plugin: record.pluginName, tool: record.toolName },
  });
}

function toQuarantined(record: QuarantinedToolRecord): QuarantinedTool {
  const served = record.servedDefinition as unknown as ToolDefinition;
  const approved = record.approvedDefinition as unknown as ToolDefinition | null;
  return {
    plugin: record.pluginName,
    pluginId: record.pluginId,
    tool: record.toolName,
    reason: record.quarantineReason ?? '',
    quarantinedAt: (record.quarantinedAt ?? new Date(0)).toISOString(),
    kind: approved === null ? 'new' : 'changed',
    approved:
      approved === null
        ? null
        : { definition: approved, by: record.approvedBy, at: record.approvedAt?.toISOString() ?? null, source: record.source },
    served,
    diff: diffDefinitions(approved, served),
  };
}

/** Creates the pinning service. */
export function createPinningService(options: PinningServiceOptions): PinningService {
  const { db, catalog } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'pinning' });
  const now = options.clock ?? (() => new Date());
  const changed = (): void => {
    try {
      options.onChange?.();
    } catch (error) {
      logger.warn({ err: error }, 'pinning onChange subscriber threw');
    }
  };

  async function requirePlugin(reference: string): Promise<PluginRecord> {
    const record = isUuid(reference) ? await findPluginRecordById(db, reference) : await findPluginRecordByName(db, reference);
    if (record === undefined || record.status === 'removed') throw notFound('plugin', reference);
    return record;
  }

  /** Writes approved pins and brings the catalog to the approved entries, then reports the change. */
  async function applyApproval(plugin: PluginRecord, toolNames: readonly string[] | undefined, by: string, source: PinSource): Promise<ApprovalResult> {
    const pins = await listToolPins(db, plugin.id);
    const { writes, approved } = approvedPins(pins, toolNames, by, source, now());
    const written = new Map(writes.map((pin) => [pin.toolName, pin]));
    const after = pins.map((pin) => written.get(pin.toolName) ?? pin);
    if (approved.length > 0) {
      // Catalog first: if it refuses the entries, the pins stay quarantined and nothing is served.
      await catalog.syncPlugin({ pluginId: plugin.name, version: plugin.version ?? 'local', tools: catalogEntries(after), categories: [], pageMappings: [] });
      await upsertToolPins(db, writes, now());
      changed();
      logger.info({ plugin: plugin.name, tools: approved, by, source }, 'tool definitions approved');
    }
    return { plugin: plugin.name, approved, by, source };
  }

  return {
    async screen(listing, screenOptions) {
      const pins = await listToolPins(db, listing.pluginId);
      return planPins(listing, pins, { ...screenOptions, now: now() });
    },
    async apply(queryable, plan) {
      await upsertToolPins(queryable, plan.writes, now());
      const pluginId = plan.writes[0]?.pluginId;
      if (plan.deletes.length > 0 && pluginId !== undefined) await deleteToolPins(queryable, pluginId, plan.deletes);
    },
    committed(plan) {
      if (plan.quarantined.length > 0) logger.warn({ tools: plan.quarantined.map((q) => q.tool) }, 'tools quarantined: their served definitions differ from the approved ones');
      // A first pin, a quarantine or a release changes what selection may serve.
      changed();
    },
    async screenServed(plugin, definitions) {
      const pins = await listToolPins(db, plugin.pluginId);
      const writes = planServed(plugin.pluginId, definitions, pins, { pluginName: plugin.pluginName, now: now() });
      if (writes.length > 0) {
        await upsertToolPins(db, writes, now());
        logger.warn({ plugin: plugin.pluginName, tools: writes.map((pin) => pin.toolName) }, 'tools quarantined: the running plugin serves definitions that differ from the approved ones');
        changed();
      }
      const served = new Set(definitions.map((definition) => definition.name));
      const written = new Map(writes.map((pin) => [pin.toolName, pin]));
      return pins.map((pin) => written.get(pin.toolName) ?? pin).filter((pin) => pin.quarantinedAt !== null && served.has(pin.toolName)).map((pin) => pin.toolName);
    },
    async quarantined(plugin) {
      const pluginId = plugin === undefined ? undefined : (await requirePlugin(plugin)).id;
      return (await listQuarantinedTools(db, pluginId)).map(toQuarantined);
    },
    quarantineOf: (pluginName, toolName) => findQuarantinedTool(db, pluginName, toolName),
    isToolQuarantined: (toolId) => (isUuid(toolId) ? isToolQuarantined(db, toolId) : Promise.resolve(true)),
    async approve(plugin, toolNames, by) {
      const record = await requirePlugin(plugin);
      const quarantined = new Set((await listQuarantinedTools(db, record.id)).map((q) => q.toolName));
      const unknown = toolNames.filter((name) => !quarantined.has(name));
      if (unknown.length > 0) throw invalidInput(`not quarantined in plugin '${record.name}': ${unknown.join(', ')}`, { tools: unknown });
      return applyApproval(record, toolNames.length === 0 ? undefined : toolNames, by, 'admin');
    },
    async pinVerified(pluginId, verifiedHashes) {
      const record = await requirePlugin(pluginId);
      const before = await listToolPins(db, record.id);
      const verifiedServed = before.filter((pin) => pin.quarantinedAt !== null && pin.servedHash !== null && verifiedHashes[pin.toolName] === pin.servedHash);
      const result = await applyApproval(record, verifiedServed.map((pin) => pin.toolName), 'verification', 'verification');
      // Tools served as approved and verified as such: their approval is now the verification's.
      const pins = await listToolPins(db, record.id);
      const repinned = pins.filter((pin) => pin.present && pin.quarantinedAt === null && pin.source !== 'verification' && pin.approvedHash !== null && verifiedHashes[pin.toolName] === pin.approvedHash);
      await upsertToolPins(db, repinned.map((pin) => ({ ...pin, source: 'verification' as const, approvedBy: 'verification', approvedAt: now() })), now());
      return result;
    },
  };
}
