import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMountArgument, protectedOverlap, ungrantedPathHint } from './host-mounts.ts';

describe('host paths (host-mounts.ts, issue #26)', () => {
  it('parses DIR, DIR:ro and DIR:rw; finds a hub path a grant is, holds or sits in', () => {
    assert.deepEqual(parseMountArgument('/srv/a'), { path: '/srv/a', mode: 'ro' });
    assert.deepEqual(parseMountArgument('/srv/a:rw'), { path: '/srv/a', mode: 'rw' });
    assert.deepEqual(parseMountArgument('/srv/a:b:ro'), { path: '/srv/a:b', mode: 'ro' });
    assert.throws(() => parseMountArgument(':rw'), /not a host path/);
    const hub = ['/home/u/.quiver', '/home/u/.quiver/data'];
    assert.equal(protectedOverlap('/home/u', hub), '/home/u/.quiver');
    assert.equal(protectedOverlap('/', hub), '/home/u/.quiver');
    assert.equal(protectedOverlap('/home/u/.quiver/plugins', hub), '/home/u/.quiver');
    assert.equal(protectedOverlap('/home/u/.quiverish', hub), undefined);
    assert.equal(protectedOverlap('/home/u/docs', hub), undefined);
  });

  it('hints the grant command for a path error outside the grants, the :rw one on EROFS, and nothing for the hub or unrelated errors', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-hint-'));
    try {
      const docs = join(root, 'docs');
      mkdirSync(docs);
      writeFileSync(join(docs, 'a.txt'), 'a');
      const spec = { pluginName: 'files', mounts: [] as Array<{ path: string; mode: 'ro' | 'rw' }>, readOnlyPaths: [] };
      assert.match(ungrantedPathHint(`ENOENT: no such file or directory, open '${docs}/a.txt'`, spec) ?? '', new RegExp(`quiver plugin mount files ${docs}'`));
      assert.match(ungrantedPathHint(`Error: ENOENT: no such file or directory, open '${docs}/new.txt'`, spec) ?? '', new RegExp(`mount files ${docs}'`));
      assert.match(ungrantedPathHint(`Warning: Cannot access directory ${docs}, skipping`, spec, { installing: true }) ?? '', new RegExp(`'--mount ${docs}'`));
      const readOnly = { ...spec, mounts: [{ path: docs, mode: 'ro' as const }] };
      assert.match(ungrantedPathHint(`EROFS: read-only file system, open '${docs}/b.txt'`, readOnly) ?? '', new RegExp(`mount files ${docs}:rw`));
      assert.equal(ungrantedPathHint(`ENOENT: open '${docs}/missing.txt'`, readOnly), undefined, 'granted: the file is simply missing');
      assert.match(ungrantedPathHint(`ENOENT: open '${root}/hub/data/x'`, spec, { hiddenPaths: [join(root, 'hub')] }) ?? '', /the hub's own/);
      assert.equal(ungrantedPathHint(`ENOENT: open '/usr/lib/x'`, spec), undefined);
      assert.equal(ungrantedPathHint(`ENOENT: open '/nowhere/at/all/x'`, spec), undefined);
      assert.equal(ungrantedPathHint(`validation failed for ${docs}`, spec), undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
