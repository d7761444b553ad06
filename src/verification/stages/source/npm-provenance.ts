/**
 * @module verification/stages/source/npm-provenance
 * What an npm install fetched, checked against the registry: the package's `resolved` tarball
 * URL and `integrity` from the install's package-lock.json, compared with the registry's
 * `dist.integrity` for that version, and the version's provenance attestations
 * (`dist.attestations`, npm's Sigstore provenance) when the registry offers them. Only the
 * version document is fetched (`<registry>/<name>/<version>`), never the whole packument.
 */
import { readSourceFile } from '../../../plugins/source-files.ts';
import type { StageIssue } from '../../types.ts';

/** The locked facts of the installed package. */
export interface LockedPackage {
  name: string;
  version: string;
  resolved: string | null;
  integrity: string | null;
  /** Packages in the lockfile (the dependency tree), and how many lack an integrity hash. */
  lockedPackages: number;
  withoutIntegrity: number;
}

/** What the registry says about that version. */
export type RegistryFacts =
  | { reachable: true; integrity: string | null; tarball: string | null; attestations: { url: string | null; predicateType: string | null } | null }
  | { reachable: false; reason: string };

/** Reads the installed package's entry from `<installRoot>/package-lock.json`. */
export async function readLockedPackage(installRoot: string, name: string): Promise<LockedPackage | { error: string }> {
  let text: string | undefined;
  try {
    text = await readSourceFile(installRoot, 'package-lock.json', { maxBytes: 32 * 1024 * 1024 });
  } catch (error) {
    return { error: `package-lock.json cannot be read: ${(error as Error).message}` };
  }
  if (text === undefined) return { error: 'the install has no package-lock.json' };
  let lock: { packages?: Record<string, { version?: string; resolved?: string; integrity?: string; link?: boolean }> };
  try {
    lock = JSON.parse(text) as typeof lock;
  } catch {
    return { error: 'package-lock.json is not valid JSON' };
  }
  const packages = lock.packages ?? {};
  const entry = packages[`node_modules/${name}`];
  if (entry === undefined) return { error: `package-lock.json has no entry for ${name}` };
  const dependencies = Object.entries(packages).filter(([path, value]) => path !== '' && value.link !== true);
  return {
    name,
    version: entry.version ?? '',
    resolved: entry.resolved ?? null,
    integrity: entry.integrity ?? null,
    lockedPackages: dependencies.length,
    withoutIntegrity: dependencies.filter(([, value]) => value.integrity === undefined).length,
  };
}

/** Fetches the registry's version document; unreachable (network, status, timeout) is a result, not an error. */
export async function fetchRegistryFacts(registryUrl: string, name: string, version: string, signal: AbortSignal, timeoutMs = 15_000): Promise<RegistryFacts> {
  const base = registryUrl.replace(/\/+$/, '');
  const url = `${base}/${name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name)}/${encodeURIComponent(version)}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
  } catch (error) {
    signal.throwIfAborted();
    return { reachable: false, reason: `${base} is unreachable (${(error as Error).name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message)})` };
  }
  if (!response.ok) return { reachable: false, reason: `${base} answered ${response.status} for ${name}@${version}` };
  const document = (await response.json().catch(() => null)) as { dist?: { integrity?: string; tarball?: string; attestations?: { url?: string; provenance?: { predicateType?: string } } } } | null;
  if (document === null) return { reachable: false, reason: `${base} answered with something that is not JSON` };
  const attestations = document.dist?.attestations;
  return {
    reachable: true,
    integrity: document.dist?.integrity ?? null,
    tarball: document.dist?.tarball ?? null,
    attestations: attestations === undefined ? null : { url: attestations.url ?? null, predicateType: attestations.provenance?.predicateType ?? null },
  };
}

/** Scores an npm source from the lockfile and the registry: 100 minus what is missing or wrong. */
export function scoreNpmSource(locked: LockedPackage, registry: RegistryFacts): { score: number; issues: StageIssue[]; mismatch: boolean } {
  const issues: StageIssue[] = [];
  let score = 100;
  const where = `${locked.name}@${locked.version}`;
  if (locked.integrity === null) {
    score -= 40;
    issues.push({ severity: 'high', code: 'no_integrity', message: 'the installed tarball has no integrity hash in package-lock.json', location: where });
  }
  if (locked.withoutIntegrity > 0) {
    score -= Math.min(20, locked.withoutIntegrity * 2);
    issues.push({ severity: 'low', code: 'dependencies_without_integrity', message: `${locked.withoutIntegrity} locked dependencies have no integrity hash`, location: 'package-lock.json' });
  }
  if (!registry.reachable) {
    score -= 15;
    issues.push({ severity: 'medium', code: 'registry_unreachable', message: `provenance not checked: ${registry.reason}`, location: where });
    return { score: Math.max(0, score), issues, mismatch: false };
  }
  const mismatch = locked.integrity !== null && registry.integrity !== null && locked.integrity !== registry.integrity;
  if (mismatch) {
    issues.push({ severity: 'critical', code: 'integrity_mismatch', message: "the installed tarball's integrity differs from the registry's for this version", location: where });
    return { score: 0, issues, mismatch };
  }
  if (registry.attestations === null) {
    score -= 10;
    issues.push({ severity: 'low', code: 'no_provenance', message: 'the registry has no provenance attestation for this version (built without npm publish --provenance)', location: where });
  } else {
    issues.push({ severity: 'info', code: 'provenance_attested', message: `provenance attestation published (${registry.attestations.predicateType ?? 'unknown predicate'})`, location: where });
  }
  return { score: Math.max(0, score), issues, mismatch };
}
