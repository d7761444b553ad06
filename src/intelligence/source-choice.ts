/**
 * @module intelligence/source-choice
 * `--from mcp,zod,…` parsed into the sources a generation reads. Apart from the service so the
 * CLI's command list checks the flag without loading the generation pipeline (issue #28).
 */
import { invalidInput } from '../core/errors.ts';
import { DEFAULT_SOURCES, SELECTABLE_SOURCES, type SelectableSource } from './types.ts';

/** Parses `--from mcp,zod,…`; unknown names are a user error naming the valid ones. */
export function parseSources(from: readonly string[] | undefined): { sources: SelectableSource[]; explicit: boolean } {
  if (from === undefined || from.length === 0) return { sources: [...DEFAULT_SOURCES], explicit: false };
  const names = from.flatMap((entry) => entry.split(',')).map((entry) => entry.trim().toLowerCase()).filter(Boolean);
  const unknown = names.filter((name) => !(SELECTABLE_SOURCES as readonly string[]).includes(name));
  if (unknown.length > 0) throw invalidInput(`unknown source${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (use ${SELECTABLE_SOURCES.join(', ')})`);
  return { sources: [...new Set(names)] as SelectableSource[], explicit: true };
}
