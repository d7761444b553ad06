/**
 * @module trust/pinning/approval
 * Lifting a quarantine: an admin approves the served definition (`quiver plugin approve`), or
 * a passed verification re-pins every tool. The approved pins take the served definition and
 * its entry, and the catalog gets those entries through the same differential sync an install
 * uses (tools of the plugin still quarantined keep their approved entry), so the approved
 * definition becomes what selection and the gateway serve.
 */
import type { ToolInput } from '../../core/tool.ts';
import type { PinSource, ToolPinRecord } from '../../store/repositories/tool-pins.ts';

/** The pins after approving `toolNames` (all quarantined ones when undefined). */
export function approvedPins(pins: readonly ToolPinRecord[], toolNames: readonly string[] | undefined, by: string, source: PinSource, at: Date): { writes: ToolPinRecord[]; approved: string[] } {
  const wanted = toolNames === undefined ? undefined : new Set(toolNames);
  const writes: ToolPinRecord[] = [];
  const approved: string[] = [];
  for (const pin of pins) {
    if (pin.quarantinedAt === null || (wanted !== undefined && !wanted.has(pin.toolName))) continue;
    writes.push({
      ...pin,
      approvedHash: pin.servedHash,
      approvedDefinition: pin.servedDefinition,
      approvedEntry: pin.servedEntry,
      approvedBy: by,
      approvedAt: at,
      source,
      quarantinedAt: null,
      quarantineReason: null,
      servedHash: null,
      servedDefinition: null,
      servedEntry: null,
    });
    approved.push(pin.toolName);
  }
  return { writes, approved };
}

/** The catalog entries of a plugin's listed tools, given its pins after an approval. */
export function catalogEntries(pins: readonly ToolPinRecord[]): ToolInput[] {
  return pins
    .filter((pin) => pin.present)
    .map((pin) => (pin.approvedEntry ?? pin.servedEntry) as unknown as ToolInput | null)
    .filter((entry): entry is ToolInput => entry !== null);
}
