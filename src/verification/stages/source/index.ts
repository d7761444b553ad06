/**
 * @module verification/stages/source
 * Stage 1 (seed 000 §4.2 "Repository Cloning", issue #10 "Source"): what exactly was fetched.
 * git: the commit (a branch moves, a commit does not); npm: the tarball's `resolved` URL and
 * `integrity`, checked against the registry, with its provenance attestations when published;
 * a local folder or a remote server: no pinned origin. Every local tree gets a content hash.
 * The score is reported but not weighted (seed weights); a tarball whose integrity differs
 * from the registry's caps the verdict at UNVERIFIED.
 */
import type { Stage, StageIssue, StageResult } from '../../types.ts';
import { hashFolder } from './folder-hash.ts';
import { fetchRegistryFacts, readLockedPackage, scoreNpmSource } from './npm-provenance.ts';

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

async function npmSource(context: Parameters<Stage>[0]): Promise<StageResult> {
  const { subject, settings, signal } = context;
  const name = str(subject.source['packageName']);
  const root = str(subject.source['cachePath']);
  if (name === null || root === null) {
    return { score: 30, issues: [{ severity: 'high', code: 'source_unrecorded', message: 'the install did not record the npm package and folder' }] };
  }
  const locked = await readLockedPackage(root, name);
  if ('error' in locked) return { score: 40, issues: [{ severity: 'high', code: 'no_lock_entry', message: locked.error, location: name }] };
  context.progress(`checking ${name}@${locked.version} against ${settings.registryUrl}`);
  const registry = await fetchRegistryFacts(settings.registryUrl, name, locked.version, signal);
  const scored = scoreNpmSource(locked, registry);
  return {
    score: scored.score,
    issues: scored.issues,
    ...(scored.mismatch ? { cap: { level: 'UNVERIFIED' as const, reason: 'the installed npm tarball does not match the registry (integrity mismatch)' } } : {}),
    metrics: {
      package: name,
      version: locked.version,
      // npm may leave registry URLs out of the lockfile (omit-lockfile-registry-resolved): the registry names the tarball then.
      resolved: locked.resolved ?? (registry.reachable ? registry.tarball : null),
      resolvedFrom: locked.resolved !== null ? 'package-lock.json' : registry.reachable && registry.tarball !== null ? 'registry' : null,
      integrity: locked.integrity,
      lockedPackages: locked.lockedPackages,
      registry: registry.reachable ? { reachable: true, integrity: registry.integrity, attestations: registry.attestations } : { reachable: false, reason: registry.reason },
    },
  };
}

function gitSource(source: Record<string, unknown>): StageResult {
  const commit = str(source['commit']);
  const issues: StageIssue[] = [];
  if (commit === null || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) {
    return { score: 30, issues: [{ severity: 'high', code: 'no_commit', message: 'the install did not record a full git commit' }] };
  }
  let score = 100;
  if (str(source['url'])?.startsWith('file:') || str(source['url'])?.startsWith('/')) {
    score -= 20;
    issues.push({ severity: 'low', code: 'local_repository', message: 'cloned from a repository on this machine: no public origin to compare with' });
  }
  if (source['refKind'] === 'branch' || source['ref'] === null) {
    issues.push({ severity: 'info', code: 'moving_ref', message: `installed from a moving ref (${str(source['ref']) ?? 'default branch'}); pinned here to commit ${commit.slice(0, 12)}` });
  }
  return { score, issues, metrics: { url: source['url'], ref: source['ref'] ?? null, commit } };
}

/** The source stage. */
export const sourceStage: Stage = async (context) => {
  const { subject } = context;
  let result: StageResult;
  switch (subject.sourceType) {
    case 'npm':
      result = await npmSource(context);
      break;
    case 'git':
      result = gitSource(subject.source);
      break;
    case 'pypi':
      // Issue #26: a version from the index pip is configured with; pip checks the hashes the index serves.
      result = {
        score: 60,
        issues: [{ severity: 'info', code: 'index_version', message: `${String(subject.source['packageName'] ?? 'a package')} ${String(subject.source['version'] ?? '')} from the Python package index (${Array.isArray(subject.source['indexes']) ? subject.source['indexes'].join(' ') : 'as pip is configured'}); no provenance attestation is checked` }],
      };
      break;
    case 'path':
      result = { score: 50, issues: [{ severity: 'medium', code: 'unpinned_folder', message: 'installed from a local folder: no pinned origin (no commit, no registry integrity)' }] };
      break;
    case 'url':
      result = { score: 40, issues: [{ severity: 'medium', code: 'remote_code_unseen', message: 'a remote server: its code cannot be fetched or pinned; only what it serves is verified' }] };
      break;
    case 'openapi':
      // Issue #14: no third-party code; Quiver's own server runs from the pinned document.
      result = {
        score: 60,
        issues: [{ severity: 'low', code: 'remote_api_unseen', message: `a REST API described by OpenAPI: the document is pinned (sha256 ${String(subject.source['sha256'] ?? 'unknown').slice(0, 16)}…) and served by Quiver's own code; the API behind ${String(subject.source['baseUrl'] ?? 'its base URL')} is not verified` }],
      };
      break;
    case 'container':
      // Issue #26: the image is pinned by id, but its contents are not analysed (no static analysis sees into an image).
      result = {
        score: 30,
        issues: [{ severity: 'medium', code: 'container_image_unseen', message: `a container image (${String(subject.source['image'] ?? 'unknown')}, id ${String(subject.source['imageId'] ?? 'unknown').slice(0, 12)}): pinned by id, but its contents are not analysed; only what it serves is verified` }],
      };
      break;
    default:
      result = { score: 0, issues: [{ severity: 'high', code: 'no_source', message: 'registered through sync: there is no source to verify' }] };
  }
  if (subject.codeDir !== null) {
    context.progress('hashing the installed code');
    const folder = await hashFolder(subject.codeDir, { signal: context.signal });
    if ('error' in folder) result.issues.push({ severity: 'low', code: 'folder_not_hashed', message: folder.error });
    result.metrics = { ...result.metrics, folderHash: 'hash' in folder ? folder.hash : null, ...('files' in folder ? { files: folder.files, bytes: folder.bytes } : {}) };
  }
  return result;
};
