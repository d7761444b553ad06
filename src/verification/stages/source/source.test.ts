/**
 * The source stage against a real HTTP registry on loopback (the npm version document shape)
 * and real folders: integrity matched, provenance present or missing, a mismatch capping the
 * verdict, an unreachable registry said so; git commits; folder hashes.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../../core/logger.ts';
import type { StageContext, VerificationSubject } from '../../types.ts';
import { hashFolder } from './folder-hash.ts';
import { sourceStage } from './index.ts';

let server: Server;
let registryUrl: string;
let root: string;
const INTEGRITY = 'sha512-abc==';
const documents: Record<string, unknown> = {
  '/@demo%2Fserver/1.2.3': { name: '@demo/server', version: '1.2.3', dist: { integrity: INTEGRITY, tarball: 'https://r/x.tgz', attestations: { url: 'https://r/att', provenance: { predicateType: 'https://slsa.dev/provenance/v1' } } } },
  '/plain/2.0.0': { name: 'plain', version: '2.0.0', dist: { integrity: INTEGRITY, tarball: 'https://r/plain-2.0.0.tgz' } },
  '/tampered/1.0.0': { name: 'tampered', version: '1.0.0', dist: { integrity: 'sha512-other==' } },
};

async function npmInstallFolder(name: string, version: string, options: { resolved?: boolean } = {}): Promise<string> {
  const installRoot = await mkdtemp(join(root, 'npm-'));
  await mkdir(join(installRoot, 'node_modules', name), { recursive: true });
  await writeFile(join(installRoot, 'node_modules', name, 'index.js'), 'console.log(1)\n');
  await writeFile(
    join(installRoot, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'x' }, [`node_modules/${name}`]: { version, ...(options.resolved === false ? {} : { resolved: `https://r/${name}.tgz` }), integrity: INTEGRITY }, 'node_modules/dep': { version: '1.0.0' } } }),
  );
  return installRoot;
}

function context(subject: Partial<VerificationSubject>, url = registryUrl): StageContext {
  return {
    subject: { pluginId: 'p', pluginName: 'p', version: '1', sourceType: 'npm', source: {}, codeDir: null, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch: null, ...subject },
    settings: { registryUrl: url, licenseAllowList: [], stageTimeoutMs: 10_000 },
    logger: silentLogger,
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

function npmSubject(installRoot: string, name: string): Partial<VerificationSubject> {
  return { sourceType: 'npm', source: { packageName: name, cachePath: installRoot, packageFolder: `node_modules/${name}` }, codeDir: join(installRoot, 'node_modules', name) };
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'quiver-source-stage-'));
  server = createServer((request, response) => {
    const document = documents[request.url ?? ''];
    response.writeHead(document ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(document ?? { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registryUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
after(async () => {
  server.close();
  await rm(root, { recursive: true, force: true });
});

it('npm: records resolved and integrity, matches the registry and notes published provenance', async () => {
  const result = await sourceStage(context(npmSubject(await npmInstallFolder('@demo/server', '1.2.3'), '@demo/server')));
  assert.equal(result.cap, undefined);
  assert.equal(result.metrics?.['integrity'], INTEGRITY);
  assert.equal(result.metrics?.['resolved'], 'https://r/@demo/server.tgz');
  assert.equal(result.metrics?.['resolvedFrom'], 'package-lock.json');
  assert.deepEqual((result.metrics?.['registry'] as { attestations: unknown }).attestations, { url: 'https://r/att', predicateType: 'https://slsa.dev/provenance/v1' });
  assert.ok(result.issues.some((issue) => issue.code === 'provenance_attested'));
  assert.ok(result.issues.some((issue) => issue.code === 'dependencies_without_integrity'));
  assert.equal(result.score, 98);
  assert.match(String(result.metrics?.['folderHash']), /^[0-9a-f]{64}$/);
});

it('npm: no provenance lowers the score; an integrity mismatch scores 0 and caps at UNVERIFIED', async () => {
  const plain = await sourceStage(context(npmSubject(await npmInstallFolder('plain', '2.0.0', { resolved: false }), 'plain')));
  assert.ok(plain.issues.some((issue) => issue.code === 'no_provenance'));
  assert.equal(plain.score, 88);
  // The lockfile names no tarball here (as with omit-lockfile-registry-resolved): the registry's is reported.
  assert.equal(plain.metrics?.['resolved'], 'https://r/plain-2.0.0.tgz');
  assert.equal(plain.metrics?.['resolvedFrom'], 'registry');
  const tampered = await sourceStage(context(npmSubject(await npmInstallFolder('tampered', '1.0.0'), 'tampered')));
  assert.equal(tampered.score, 0);
  assert.equal(tampered.cap?.level, 'UNVERIFIED');
  assert.ok(tampered.issues.some((issue) => issue.code === 'integrity_mismatch' && issue.severity === 'critical'));
});

it('npm: an unreachable registry is said, not guessed', async () => {
  const result = await sourceStage(context(npmSubject(await npmInstallFolder('plain', '2.0.0'), 'plain'), 'http://127.0.0.1:9/'));
  const issue = result.issues.find((candidate) => candidate.code === 'registry_unreachable');
  assert.ok(issue, JSON.stringify(result.issues));
  assert.match(issue.message, /unreachable/);
  assert.deepEqual((result.metrics?.['registry'] as { reachable: boolean }).reachable, false);
});

it('git: a full commit is pinned; a branch is noted; a missing commit is an issue', async () => {
  const commit = 'a'.repeat(40);
  const pinned = await sourceStage(context({ sourceType: 'git', source: { url: 'https://example.org/x.git', ref: 'main', refKind: 'branch', commit } }));
  assert.equal(pinned.score, 100);
  assert.equal(pinned.metrics?.['commit'], commit);
  assert.ok(pinned.issues.some((issue) => issue.code === 'moving_ref'));
  const unpinned = await sourceStage(context({ sourceType: 'git', source: { url: 'https://example.org/x.git' } }));
  assert.equal(unpinned.issues[0]?.code, 'no_commit');
  const folder = await sourceStage(context({ sourceType: 'path', source: { path: root } }));
  assert.equal(folder.issues[0]?.code, 'unpinned_folder');
});

it('folder hashes are stable, change with one byte, and never follow links', async () => {
  const folder = await mkdtemp(join(root, 'tree-'));
  await mkdir(join(folder, 'src'));
  await mkdir(join(folder, 'node_modules', 'x'), { recursive: true });
  await writeFile(join(folder, 'src', 'a.js'), 'export const a = 1;\n');
  await writeFile(join(folder, 'node_modules', 'x', 'i.js'), 'ignored');
  await symlink('/etc/hostname', join(folder, 'link'));
  const first = await hashFolder(folder);
  assert.ok('hash' in first);
  assert.equal(first.files, 2);
  assert.deepEqual(await hashFolder(folder), first);
  await writeFile(join(folder, 'node_modules', 'x', 'i.js'), 'still ignored');
  assert.deepEqual(await hashFolder(folder), first);
  await writeFile(join(folder, 'src', 'a.js'), 'export const a = 2;\n');
  const changed = await hashFolder(folder);
  assert.ok('hash' in changed && changed.hash !== first.hash);
  assert.match(JSON.stringify(await hashFolder(folder, { maxFiles: 1 })), /more than 1 files/);
});
