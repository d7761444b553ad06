/**
 * @module catalog/sync-plan
 * The pure half of plugin self-registration (seed 001 §9.1): given the payload and what is
 * stored, decide every write. Per tool, the content hash decides: equal hash and equal
 * non-content fields → skipped; equal hash but a changed category, pin, status… → updated
 * and versioned without re-embedding; changed hash → updated, versioned and marked stale;
 * unknown → inserted (embedding pending) at version 1; stored but absent → soft-deleted; a
 * soft-deleted tool that reappears is revived. A major `schemaVersion` bump flags the tool
 * for review (§9.3). Every unresolvable name is collected, so one error lists them all.
 */
import type { FieldIssue } from '../core/validation.ts';
import type { CategoryRecord, CategoryWrite } from '../store/repositories/categories.ts';
import type { PageMappingRecord, PageMappingWrite } from '../store/repositories/page-mappings.ts';
import type { NewToolRow, StoredToolSummary, ToolState, ToolUpdateRow } from '../store/repositories/tools.ts';
import type { NewToolVersion } from '../store/repositories/versions.ts';
import type { ParsedSyncPayload } from './sync-schema.ts';
import { changedToolFields, changedUnhashedFields, hashToolState, isMajorBump, snapshotOf, toolStateFromInput } from './tool-state.ts';

/** What the planner reads. */
export interface SyncPlanInputs {
  pluginId: string;
  payload: ParsedSyncPayload;
  /** The plugin's own categories and the global ones. */
  storedCategories: readonly CategoryRecord[];
  /** Every tool of the plugin, soft-deleted ones included, without hashed content. */
  storedTools: readonly StoredToolSummary[];
  /** The content hash of each payload tool, by index (`payloadContentHashes`). */
  contentHashes: readonly string[];
  /** The full stored state of every tool whose hash changed (`contentChangedIds`). */
  storedContent: ReadonlyMap<string, ToolState>;
  /** The plugin's mappings. */
  storedMappings: readonly PageMappingRecord[];
  /** Makes ids for new rows. */
  newId: () => string;
  /** Recorded on every version row the sync writes. */
  changeReason: string;
  createdBy: string;
}

/** Every write a sync makes, plus the names the report lists. */
export interface SyncPlan {
  problems: FieldIssue[];
  categoryWrites: (CategoryWrite & { id: string })[];
  toolInserts: NewToolRow[];
  toolUpdates: ToolUpdateRow[];
  versions: NewToolVersion[];
  deleteIds: string[];
  mappingWrites: PageMappingWrite[];
  inserted: string[];
  updated: string[];
  revived: string[];
  deleted: string[];
  unchanged: number;
  markedStale: string[];
  needsReview: string[];
}

/** The content hash of every payload tool, by index (computed before the transaction opens). */
export function payloadContentHashes(payload: ParsedSyncPayload): string[] {
  return payload.tools.map((tool) => hashToolState(toolStateFromInput(tool, null)));
}

/** The ids of stored tools whose content the payload changes: only these need their full state read. */
export function contentChangedIds(payload: ParsedSyncPayload, contentHashes: readonly string[], storedTools: readonly StoredToolSummary[]): string[] {
  const storedByName = new Map(storedTools.map((tool) => [tool.name, tool]));
  const ids: string[] = [];
  payload.tools.forEach((tool, index) => {
    const stored = storedByName.get(tool.name);
    if (stored !== undefined && stored.contentHash !== contentHashes[index]) ids.push(stored.id);
  });
  return ids;
}

/** Decides the writes of one sync; `problems` non-empty means nothing may be written. */
export function planSync(inputs: SyncPlanInputs): SyncPlan {
  const { pluginId, payload } = inputs;
  const plan: SyncPlan = {
    problems: [], categoryWrites: [], toolInserts: [], toolUpdates: [], versions: [], deleteIds: [], mappingWrites: [],
    inserted: [], updated: [], revived: [], deleted: [], unchanged: 0, markedStale: [], needsReview: [],
  };

  // Categories: the plugin's own first, then global ones (core/tool.ts `category`).
  const own = new Map<string, CategoryRecord>();
  const global = new Map<string, CategoryRecord>();
  for (const category of inputs.storedCategories) {
    if (category.pluginId === pluginId) own.set(category.name, category);
    else if (category.pluginId === null) global.set(category.name, category);
  }
  const declared = new Map<string, string>(payload.categories.map((c) => [c.name, own.get(c.name)?.id ?? inputs.newId()]));
  const resolve = (name: string) => declared.get(name) ?? own.get(name)?.id ?? global.get(name)?.id;
  const nameById = new Map<string, string>([
    ...[...global.values(), ...own.values()].map((c): [string, string] => [c.id, c.name]),
    ...[...declared].map(([name, id]): [string, string] => [id, name]),
  ]);

  const parents = new Map<string, string | null>();
  payload.categories.forEach((category, index) => {
    let parentId: string | null = null;
    if (category.parent !== undefined) {
      parentId = resolve(category.parent) ?? null;
      if (parentId === null) plan.problems.push({ path: `categories.${index}.parent`, message: `unknown parent category '${category.parent}'` });
    }
    parents.set(category.name, parentId);
  });
  payload.categories.forEach((category, index) => {
    // Walk up through declared categories; meeting the start again is a cycle.
    const seen = new Set<string>([category.name]);
    let parentName = category.parent;
    while (parentName !== undefined && declared.has(parentName)) {
      if (seen.has(parentName)) {
        plan.problems.push({ path: `categories.${index}.parent`, message: `category '${category.name}' is its own ancestor` });
        break;
      }
      seen.add(parentName);
      parentName = payload.categories.find((c) => c.name === parentName)?.parent;
    }
    const id = declared.get(category.name)!;
    const write = {
      id, name: category.name, displayName: category.displayName ?? null, description: category.description,
      parentId: parents.get(category.name) ?? null, pluginId,
    };
    const stored = own.get(category.name);
    if (stored === undefined || stored.displayName !== write.displayName || stored.description !== write.description || stored.parentId !== write.parentId) {
      plan.categoryWrites.push(write);
    }
  });

  // Tools.
  const storedByName = new Map(inputs.storedTools.map((tool) => [tool.name, tool]));
  payload.tools.forEach((input, index) => {
    let categoryId: string | null = null;
    if (input.category !== undefined) {
      categoryId = resolve(input.category) ?? null;
      if (categoryId === null) {
        plan.problems.push({ path: `tools.${index}.category`, message: `unknown category '${input.category}'` });
        return;
      }
    }
    const state = toolStateFromInput(input, categoryId);
    const contentHash = inputs.contentHashes[index] ?? hashToolState(state);
    const snapshot = () => snapshotOf(state, contentHash, categoryId === null ? null : nameById.get(categoryId) ?? null);
    const stored = storedByName.get(input.name);
    if (stored === undefined) {
      const id = inputs.newId();
      plan.toolInserts.push({ ...state, id, pluginId, contentHash, embeddingStatus: 'pending' });
      plan.versions.push({
        toolId: id, version: 1, snapshot: snapshot(), changedFields: [], changeReason: inputs.changeReason,
        contentHash, schemaVersion: state.schemaVersion, createdBy: inputs.createdBy,
      });
      plan.inserted.push(input.name);
      return;
    }
    const contentEqual = contentHash === stored.contentHash;
    // Equal hashes: compare the unhashed fields only (the summary has them). Else the full stored state.
    let changedFields: string[];
    if (contentEqual) {
      changedFields = changedUnhashedFields(stored, state);
    } else {
      const before = inputs.storedContent.get(stored.id);
      if (before === undefined) throw new Error(`sync planner: no stored content for changed tool '${stored.name}'`);
      changedFields = changedToolFields(before, state);
    }
    const revive = stored.deletedAt !== null;
    if (revive) changedFields.push('deletedAt');
    if (changedFields.length === 0) {
      plan.unchanged += 1;
      return;
    }
    const flagged = !stored.needsReview && isMajorBump(stored.schemaVersion, state.schemaVersion);
    const version = stored.version + 1;
    plan.toolUpdates.push({
      ...state, id: stored.id, version, needsReview: stored.needsReview || flagged, contentHash, markStale: !contentEqual,
    });
    plan.versions.push({
      toolId: stored.id, version, snapshot: snapshot(), changedFields, changeReason: inputs.changeReason,
      contentHash, schemaVersion: state.schemaVersion, createdBy: inputs.createdBy,
    });
    (revive ? plan.revived : plan.updated).push(input.name);
    if (!contentEqual) plan.markedStale.push(input.name);
    if (flagged) plan.needsReview.push(input.name);
  });
  const present = new Set(payload.tools.map((tool) => tool.name));
  for (const tool of inputs.storedTools) {
    if (tool.deletedAt === null && !present.has(tool.name)) {
      plan.deleteIds.push(tool.id);
      plan.deleted.push(tool.name);
    }
  }

  // Mappings, upserted by (pattern, category, plugin); only new ones and changed priorities are written.
  const storedMappings = new Map(inputs.storedMappings.map((m) => [`${m.pagePattern}\u0000${m.categoryId}`, m]));
  payload.pageMappings.forEach((mapping, index) => {
    const categoryId = resolve(mapping.category);
    if (categoryId === undefined) {
      plan.problems.push({ path: `pageMappings.${index}.category`, message: `unknown category '${mapping.category}'` });
      return;
    }
    const stored = storedMappings.get(`${mapping.pagePattern}\u0000${categoryId}`);
    if (stored === undefined || stored.priority !== mapping.priority) {
      plan.mappingWrites.push({ pagePattern: mapping.pagePattern, categoryId, pluginId, priority: mapping.priority });
    }
  });
  return plan;
}
