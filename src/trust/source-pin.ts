/**
 * @module trust/source-pin
 * Whether a plugin's installed source is pinned (issue #23): the levels that loosen isolation
 * are granted to a source that cannot change under the grant — a git commit, an npm version
 * whose tarball has an integrity hash, a content-addressed OpenAPI document. A local folder, a
 * remote server and a synced entry can change at any time, so no grant above COMMUNITY holds
 * for them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginRecord } from '../store/repositories/plugins.ts';

/** What pins a plugin's source, or why nothing does. */
export interface SourcePin {
  pinned: boolean;
  /** One line for people: `git commit 3f2a…`, `local folder /srv/x (not pinned)`. */
  description: string;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The integrity hash npm recorded for the installed package, if any. */
async function npmIntegrity(installRoot: string, packageName: string): Promise<string | undefined> {
  try {
    const lock = JSON.parse(await readFile(join(installRoot, 'package-lock.json'), 'utf8')) as { packages?: Record<string, { integrity?: unknown }> };
    return str(lock.packages?.[`node_modules/${packageName}`]?.integrity);
  } catch {
    return undefined;
  }
}

/** Reads what pins the record's source (the npm lockfile for npm installs). */
export async function sourcePinOf(record: Pick<PluginRecord, 'sourceType' | 'source'>): Promise<SourcePin> {
  const source = record.source;
  switch (record.sourceType) {
    case 'git': {
      const commit = str(source['commit']);
      return commit !== undefined && /^[0-9a-f]{40}$/.test(commit)
        ? { pinned: true, description: `git commit ${commit.slice(0, 12)} of ${str(source['url']) ?? 'a repository'}` }
        : { pinned: false, description: 'a git install without a recorded commit (not pinned)' };
    }
    case 'npm': {
      const name = str(source['packageName']);
      const version = str(source['version']);
      const root = str(source['cachePath']);
      const integrity = name !== undefined && root !== undefined ? await npmIntegrity(root, name) : undefined;
      return integrity !== undefined && version !== undefined
        ? { pinned: true, description: `npm ${name}@${version} (${integrity.slice(0, 20)}…)` }
        : { pinned: false, description: `npm ${name ?? 'package'}${version ? `@${version}` : ''} without an integrity hash in its lockfile (not pinned)` };
    }
    case 'openapi': {
      const digest = str(source['sha256']);
      return digest !== undefined
        ? { pinned: true, description: `OpenAPI document sha256 ${digest.slice(0, 16)}…` }
        : { pinned: false, description: 'an OpenAPI document without a recorded hash (not pinned)' };
    }
    case 'pypi': {
      // The venv of that version is installed once, in its own cache folder, and never re-resolved.
      const name = str(source['packageName']);
      const version = str(source['version']);
      return name !== undefined && version !== undefined
        ? { pinned: true, description: `Python package ${name}==${version} (installed once into its own cached environment)` }
        : { pinned: false, description: 'a Python package without a recorded version (not pinned)' };
    }
    case 'path':
      return { pinned: false, description: `local folder ${str(source['path']) ?? ''} (not pinned: it can change under the grant)`.replace('  ', ' ') };
    case 'url':
      return { pinned: false, description: `remote server ${str(source['url']) ?? ''} (not pinned: its code is not here)`.replace('  ', ' ') };
    case 'sync':
      return { pinned: false, description: 'a synced catalog entry (no code to pin)' };
    case 'container': {
      const id = str(source['imageId']);
      return id !== undefined
        ? { pinned: true, description: `container image ${str(source['image']) ?? ''} id ${id.slice(0, 12)} (pinned; its contents are not analysed)` }
        : { pinned: false, description: 'a container image without a recorded id (not pinned)' };
    }
  }
}
