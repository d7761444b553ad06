/**
 * @module trust/pinning/plan
 * The pure half of pinning: given what a plugin serves now (definitions, and the catalog
 * entries built from them) and its stored pins, decide the pins to write and the entries the
 * catalog syncs.
 *
 * The rule (issue #10): the first discovery of a plugin pins every tool (trust on first use);
 * verification re-pins (pinVerified); afterwards each listing is compared with the pins.
 * - served hash = approved hash → served; a quarantine left from before is lifted;
 * - served hash ≠ approved hash (name, title, description, a schema or annotations changed) →
 *   quarantined; the catalog keeps the APPROVED entry (never silently replaced), the served
 *   definition and its entry are stored as pending until approved;
 * - a name with no approved pin (a new tool, or a rename's new name) → quarantined as new,
 *   pending approval; its entry enters the catalog, hidden;
 * - a pinned tool the plugin no longer lists keeps its pin (present = false), its quarantine goes.
 */
import type { ToolInput } from '../../core/tool.ts';
import type { PinSource, ToolPinRecord } from '../../store/repositories/tool-pins.ts';
import { changedParts, definitionHash, definitionOf, type ToolDefinition } from './definition.ts';

/** What a plugin serves now. */
export interface ServedListing {
  pluginId: string;
  /** The served definitions. */
  definitions: readonly ToolDefinition[];
  /** The catalog entries built from them (matched by name). */
  entries: readonly ToolInput[];
}

/** The decisions of one screening. */
export interface PinPlan {
  /** Pins to write. */
  writes: ToolPinRecord[];
  /** Tool names whose pins are deleted (a pending new tool the plugin no longer lists). */
  deletes: string[];
  /** The entries the catalog syncs (approved ones for quarantined changed tools). */
  entries: ToolInput[];
  /** Tools quarantined by this screening (newly, or still). */
  quarantined: Array<{ tool: string; reason: string }>;
  /** Tools whose quarantine this screening lifted (the plugin serves the approved definition again). */
  released: string[];
  /** True when this screening pinned the plugin for the first time. */
  firstPin: boolean;
}

/** A fresh pin of a served tool, approved now. */
export function approvedPin(pluginId: string, definition: ToolDefinition, entry: ToolInput, source: PinSource, by: string, at: Date): ToolPinRecord {
  return {
    pluginId,
    toolName: definition.name,
    approvedHash: definitionHash(definition),
    approvedDefinition: definitionOf(definition) as unknown as Record<string, unknown>,
    approvedEntry: entry as unknown as Record<string, unknown>,
    approvedBy: by,
    approvedAt: at,
    source,
    present: true,
    quarantinedAt: null,
    quarantineReason: null,
    servedHash: null,
    servedDefinition: null,
    servedEntry: null,
  };
}

/** Why a served definition is quarantined, in words an admin acts on. */
export function quarantineReason(pin: ToolPinRecord | undefined, definition: ToolDefinition, pluginName: string): string {
  const approve = `approve it with 'quiver plugin approve ${pluginName} ${definition.name}' or re-verify the plugin`;
  if (pin?.approvedDefinition == null) return `new tool '${definition.name}' has not been approved yet; ${approve}`;
  const parts = changedParts(pin.approvedDefinition as unknown as ToolDefinition, definition);
  const by = pin.approvedBy === null ? '' : ` by ${pin.approvedBy}`;
  return `the plugin now serves a different ${parts.join(', ')} than was approved${by}; ${approve}`;
}

/**
 * Screens what a running plugin serves (its process restarted since install or sync) without
 * touching the catalog: a served definition that differs from its approved pin is quarantined
 * (the catalog keeps the approved entry; the pending entry is the approved one with the served
 * description, schemas and annotations, until a sync rebuilds it); nothing is released and
 * unknown names are ignored (they are not in the catalog, so nothing can call them).
 */
export function planServed(pluginId: string, definitions: readonly ToolDefinition[], pins: readonly ToolPinRecord[], options: { pluginName: string; now: Date }): ToolPinRecord[] {
  const byName = new Map(pins.map((pin) => [pin.toolName, pin]));
  const writes: ToolPinRecord[] = [];
  for (const definition of definitions) {
    const pin = byName.get(definition.name);
    const hash = definitionHash(definition);
    if (pin?.approvedHash == null || pin.approvedHash === hash || pin.approvedEntry === null) continue;
    if (pin.quarantinedAt !== null && pin.servedHash === hash) continue;
    const entry = {
      ...pin.approvedEntry,
      description: definition.description ?? '',
      parameters: definition.inputSchema,
      annotations: definition.annotations ?? {},
      ...(definition.outputSchema === undefined ? {} : { returnSchema: definition.outputSchema }),
    };
    writes.push({
      ...pin,
      pluginId,
      quarantinedAt: pin.quarantinedAt ?? options.now,
      quarantineReason: quarantineReason(pin, definition, options.pluginName),
      servedHash: hash,
      servedDefinition: definitionOf(definition) as unknown as Record<string, unknown>,
      servedEntry: entry,
    });
  }
  return writes;
}

/** Screens a listing against the stored pins (`firstDiscovery`: pin everything as served). */
export function planPins(listing: ServedListing, pins: readonly ToolPinRecord[], options: { pluginName: string; firstDiscovery: boolean; now: Date }): PinPlan {
  const { pluginId } = listing;
  const entryByName = new Map(listing.entries.map((entry) => [entry.name, entry]));
  const plan: PinPlan = { writes: [], deletes: [], entries: [], quarantined: [], released: [], firstPin: false };
  // A plugin without any approved pin (new, or installed before pinning existed) is pinned as served.
  const first = options.firstDiscovery || !pins.some((pin) => pin.approvedHash !== null);
  const byName = new Map(pins.map((pin) => [pin.toolName, pin]));
  const served = new Set<string>();
  for (const definition of listing.definitions) {
    const entry = entryByName.get(definition.name);
    if (entry === undefined) continue; // discovery and catalog entries come from one listing
    served.add(definition.name);
    if (first) {
      plan.writes.push(approvedPin(pluginId, definition, entry, 'first-discovery', 'first-discovery', options.now));
      plan.entries.push(entry);
      continue;
    }
    const pin = byName.get(definition.name);
    const hash = definitionHash(definition);
    if (pin !== undefined && pin.approvedHash === hash) {
      if (pin.quarantinedAt !== null) plan.released.push(definition.name);
      // Quiver's own metadata (quiver.json) may change freely: the newest entry of an approved definition is kept.
      plan.writes.push({ ...pin, approvedEntry: entry as unknown as Record<string, unknown>, present: true, quarantinedAt: null, quarantineReason: null, servedHash: null, servedDefinition: null, servedEntry: null });
      plan.entries.push(entry);
      continue;
    }
    const reason = quarantineReason(pin, definition, options.pluginName);
    const stillSame = pin?.quarantinedAt != null && pin.servedHash === hash;
    plan.writes.push({
      ...(pin ?? { pluginId, toolName: definition.name, approvedHash: null, approvedDefinition: null, approvedEntry: null, approvedBy: null, approvedAt: null, source: null }),
      present: true,
      quarantinedAt: stillSame ? pin.quarantinedAt : options.now,
      quarantineReason: reason,
      servedHash: hash,
      servedDefinition: definitionOf(definition) as unknown as Record<string, unknown>,
      servedEntry: entry as unknown as Record<string, unknown>,
    });
    plan.quarantined.push({ tool: definition.name, reason });
    // The catalog keeps serving the approved entry; a new tool enters with its own, hidden.
    plan.entries.push(pin?.approvedEntry != null ? (pin.approvedEntry as unknown as ToolInput) : entry);
  }
  if (first) {
    plan.firstPin = true;
    plan.deletes.push(...pins.filter((pin) => !served.has(pin.toolName)).map((pin) => pin.toolName));
    return plan;
  }
  for (const pin of pins) {
    if (served.has(pin.toolName)) continue;
    if (pin.approvedHash === null) plan.deletes.push(pin.toolName);
    else if (pin.present || pin.quarantinedAt !== null) {
      plan.writes.push({ ...pin, present: false, quarantinedAt: null, quarantineReason: null, servedHash: null, servedDefinition: null, servedEntry: null });
    }
  }
  return plan;
}
