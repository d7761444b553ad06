/**
 * @module catalog/page-pattern
 * Context ("page") pattern matching, pure (seed 001 §5.3). Four modes:
 *
 * | pattern      | mode     | matches a page that…          |
 * |--------------|----------|-------------------------------|
 * | `deals`      | exact    | equals `deals`                |
 * | `deals*`     | prefix   | starts with `deals`           |
 * | `*deals`     | suffix   | ends with `deals`             |
 * | `*deals*`    | contains | contains `deals`              |
 *
 * `*` alone is a prefix pattern with an empty prefix: it matches every page (a catch-all
 * mapping). A `*` anywhere else, and `**`, are rejected: no mode gives them a meaning.
 * Matching is case-sensitive, as page keys are identifiers, not prose.
 */
import { z } from 'zod';

/** How a pattern matches. */
export type PagePatternMode = 'exact' | 'prefix' | 'suffix' | 'contains';

/** A pattern split into its mode and the literal text it compares. */
export interface ParsedPagePattern {
  mode: PagePatternMode;
  text: string;
}

/** Why `pattern` is not a valid page pattern, or undefined when it is. */
export function pagePatternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'a page pattern must not be empty';
  if (pattern === '**') return '"**" has no meaning; use "*" to match every page';
  const inner = pattern.slice(pattern.startsWith('*') ? 1 : 0, pattern.endsWith('*') ? -1 : undefined);
  if (inner.includes('*')) return `"*" may only start or end a page pattern (got "${pattern}")`;
  return undefined;
}

/** zod schema for a page pattern (1–500 characters, `*` only at the ends). */
export const pagePatternSchema = z
  .string()
  .max(500)
  .superRefine((pattern, context) => {
    const problem = pagePatternProblem(pattern);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

/** Splits a valid pattern into mode and text (seed 001 §5.3's four modes). */
export function parsePagePattern(pattern: string): ParsedPagePattern {
  const leading = pattern.startsWith('*');
  const trailing = pattern.endsWith('*') && pattern.length > 1;
  if (leading && trailing) return { mode: 'contains', text: pattern.slice(1, -1) };
  if (trailing) return { mode: 'prefix', text: pattern.slice(0, -1) };
  if (pattern === '*') return { mode: 'prefix', text: '' };
  if (leading) return { mode: 'suffix', text: pattern.slice(1) };
  return { mode: 'exact', text: pattern };
}

/** True when `page` matches `pattern`. */
export function matchesPagePattern(pattern: string, page: string): boolean {
  const { mode, text } = parsePagePattern(pattern);
  switch (mode) {
    case 'exact':
      return page === text;
    case 'prefix':
      return page.startsWith(text);
    case 'suffix':
      return page.endsWith(text);
    case 'contains':
      return page.includes(text);
  }
}

const MODE_RANK: Record<PagePatternMode, number> = { exact: 3, prefix: 2, suffix: 2, contains: 1 };

/**
 * How specific a pattern is, for breaking priority ties: exact beats prefix/suffix beats
 * contains, and a longer literal beats a shorter one.
 */
export function pagePatternSpecificity(pattern: string): number {
  const { mode, text } = parsePagePattern(pattern);
  return MODE_RANK[mode] * 10_000 + text.length;
}

/** The part of a mapping the matcher reads. */
export interface PagePatternMapping {
  pagePattern: string;
  categoryId: string;
  priority: number;
}

/**
 * The mappings that match `page`, best first: higher priority, then the more specific pattern.
 * Each category appears once, at its best-ranked mapping (seed 001 §5.3 "collect matching
 * category IDs").
 */
export function matchPageMappings<M extends PagePatternMapping>(mappings: readonly M[], page: string): M[] {
  const matching = mappings
    .filter((mapping) => matchesPagePattern(mapping.pagePattern, page))
    .sort(
      (a, b) =>
        b.priority - a.priority ||
        pagePatternSpecificity(b.pagePattern) - pagePatternSpecificity(a.pagePattern) ||
        (a.pagePattern < b.pagePattern ? -1 : a.pagePattern > b.pagePattern ? 1 : 0),
    );
  const seen = new Set<string>();
  return matching.filter((mapping) => {
    if (seen.has(mapping.categoryId)) return false;
    seen.add(mapping.categoryId);
    return true;
  });
}
