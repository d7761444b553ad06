/**
 * The copy of a local Python folder that gets Quiver's venv (issue #26): the same content hashes
 * the same wherever it lies, any change to a file, name or link gives another hash (so another
 * cache folder and a fresh venv), and venvs, caches and build leftovers are neither copied nor hashed.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyProjectFolder, hasOwnVenv } from './folder-copy.ts';

const base = mkdtempSync(join(tmpdir(), 'quiver-folder-copy-'));
after(() => rmSync(base, { recursive: true, force: true }));
let count = 0;

function project(extra: Record<string, string> = {}): string {
  const folder = join(base, `project-${count++}`);
  const files: Record<string, string> = { 'pyproject.toml': '[project]\nname = "x"\n', 'x/__init__.py': '', 'x/server.py': 'print(1)\n', ...extra };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return folder;
}

async function copy(folder: string) {
  const target = join(base, `copy-${count++}`);
  mkdirSync(target);
  return { target, ...(await copyProjectFolder(folder, target)) };
}

describe('copyProjectFolder', () => {
  it('copies the files and hashes the same content the same in any place', async () => {
    const first = await copy(project());
    const second = await copy(project());
    assert.equal(first.hash, second.hash);
    assert.equal(first.files, 3);
    assert.equal(readFileSync(join(first.target, 'x', 'server.py'), 'utf8'), 'print(1)\n');
  });

  it('a changed file, an added file, a renamed file or a changed link target gives another hash', async () => {
    const original = (await copy(project())).hash;
    assert.notEqual((await copy(project({ 'x/server.py': 'print(2)\n' }))).hash, original);
    assert.notEqual((await copy(project({ 'x/extra.py': '' }))).hash, original);
    const renamed = project();
    rmSync(join(renamed, 'x', 'server.py'));
    writeFileSync(join(renamed, 'x', 'main.py'), 'print(1)\n');
    assert.notEqual((await copy(renamed)).hash, original);
    const linkA = project();
    symlinkSync('server.py', join(linkA, 'x', 'alias.py'));
    const linkB = project();
    symlinkSync('__init__.py', join(linkB, 'x', 'alias.py'));
    const copiedA = await copy(linkA);
    assert.notEqual(copiedA.hash, (await copy(linkB)).hash);
    assert.equal(readlinkSync(join(copiedA.target, 'x', 'alias.py')), 'server.py', 'a link is copied as a link');
  });

  it('leaves out venvs, .git, caches and egg-info, which change nothing in the hash', async () => {
    const clean = (await copy(project())).hash;
    const noisy = project({ '.git/HEAD': 'ref\n', 'x/__pycache__/server.cpython-311.pyc': 'bytes', 'x.egg-info/PKG-INFO': 'x', '.quiver-venv/pyvenv.cfg': 'home = /usr/bin\n', 'env/pyvenv.cfg': 'home = /usr/bin\n', 'env/lib/a.py': '' });
    const copied = await copy(noisy);
    assert.equal(copied.hash, clean);
    for (const left of ['.git', 'x/__pycache__', 'x.egg-info', '.quiver-venv', 'env']) assert.ok(!existsSync(join(copied.target, left)), left);
  });
});

describe('hasOwnVenv', () => {
  it('is true for a folder with a venv of its own (kept in place), not for Quiver\'s own or none', async () => {
    assert.equal(await hasOwnVenv(project({ '.venv/pyvenv.cfg': 'home = /usr/bin\n' })), true);
    assert.equal(await hasOwnVenv(project({ '.quiver-venv/pyvenv.cfg': 'home = /usr/bin\n' })), false);
    assert.equal(await hasOwnVenv(project()), false);
  });
});
