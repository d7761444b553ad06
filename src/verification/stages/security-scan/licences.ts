/**
 * @module verification/stages/security-scan/licences
 * Licences of the plugin and its production dependencies (issue #10): each package's
 * `license` (or legacy `licenses`) read as an SPDX expression with spdx-expression-parse and
 * checked with spdx-satisfies against the configured allow-list, so `(MIT OR GPL-3.0)` passes
 * an allow-list with MIT and `(MIT AND GPL-3.0)` does not. Missing, `UNLICENSED` and
 * `SEE LICENSE IN …` cannot be checked and are reported as unknown, not as disallowed.
 */
import { createRequire } from 'node:module';
import type { InstalledPackage } from '../static-analysis/package-tree.ts';

// Required on the first licence checked, not at start (issue #28: an idle server checks none).
const require = createRequire(import.meta.url);
const parseSpdx = (expression: string): unknown => (require('spdx-expression-parse') as (expression: string) => unknown)(expression);
const spdxSatisfies = (expression: string, approved: string[]): boolean => (require('spdx-satisfies') as (expression: string, approved: string[]) => boolean)(expression, approved);

/** The verdict on one package's licence. */
export type LicenceStatus = { status: 'allowed'; expression: string } | { status: 'disallowed'; expression: string } | { status: 'unknown'; reason: string };

function expressionOf(license: unknown): string | undefined {
  if (typeof license === 'string') return license.trim();
  if (license !== null && typeof license === 'object' && !Array.isArray(license) && typeof (license as { type?: unknown }).type === 'string') return (license as { type: string }).type.trim();
  if (Array.isArray(license)) {
    // Legacy `licenses: [{type}]`: the package may be used under any of them.
    const types = license.map(expressionOf).filter((type): type is string => type !== undefined && type !== '');
    return types.length === 0 ? undefined : types.length === 1 ? types[0] : `(${types.join(' OR ')})`;
  }
  return undefined;
}

function isValid(expression: string): boolean {
  try {
    parseSpdx(expression);
    return true;
  } catch {
    return false;
  }
}

/** The allow-list entries spdx-satisfies accepts (single ids, `+` ranges, `WITH` exceptions). */
export function usableAllowList(allowList: readonly string[]): string[] {
  return allowList.filter((entry) => isValid(entry) && !/\s(AND|OR)\s/.test(entry));
}

/** Judges one package's licence against the allow-list (already filtered by usableAllowList). */
export function judgeLicence(pkg: Pick<InstalledPackage, 'license'>, allowList: string[]): LicenceStatus {
  const expression = expressionOf(pkg.license);
  if (expression === undefined || expression === '') return { status: 'unknown', reason: 'no licence declared' };
  if (/^UNLICENSED$/i.test(expression)) return { status: 'unknown', reason: 'UNLICENSED (proprietary)' };
  if (/^SEE LICEN[CS]E IN /i.test(expression)) return { status: 'unknown', reason: 'licence only in a file' };
  if (!isValid(expression)) return { status: 'unknown', reason: 'not a valid SPDX expression' };
  try {
    return spdxSatisfies(expression, allowList) ? { status: 'allowed', expression } : { status: 'disallowed', expression };
  } catch {
    return { status: 'unknown', reason: 'not a valid SPDX expression' };
  }
}
