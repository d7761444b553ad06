/**
 * The venv-link rule (issue #26): the launch check refuses links out of the plugin's folder
 * (issue #18 finding 4) except a venv's `bin/python*` — in a folder with a plain pyvenv.cfg
 * naming `home` — whose link ends at a system `python3[.N]` under /usr. Everything else that
 * looks like it stays refused: a venv interpreter linking elsewhere, a link named python that
 * ends at another program, a missing or linked pyvenv.cfg, a path out of the folder.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveLaunch } from '../launch.ts';
import { isVenvInterpreter } from './venv-link.ts';

const SYSTEM_PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((path) => existsSync(path) && realpathSync(path).startsWith('/usr/'));
const base = mkdtempSync(join(tmpdir(), 'quiver-venv-link-'));
after(() => rmSync(base, { recursive: true, force: true }));

let count = 0;
/** A plugin folder with `<venv>/bin/<name>` linking to `target` and the given pyvenv.cfg (undefined: none). */
function venvFolder(target: string, options: { venv?: string; name?: string; config?: string | undefined } = {}): string {
  const root = join(base, `plugin-${count++}`);
  const venv = join(root, options.venv ?? '.venv');
  mkdirSync(join(venv, 'bin'), { recursive: true });
  symlinkSync(target, join(venv, 'bin', options.name ?? 'python'));
  const config = 'config' in options ? options.config : `home = ${join(target, '..')}\nversion = 3.11.2\n`;
  if (config !== undefined) writeFileSync(join(venv, 'pyvenv.cfg'), config);
  return root;
}

// Provisioning installs python3 under /usr; without it these fail rather than skip.
describe('isVenvInterpreter', () => {
  const python = SYSTEM_PYTHON ?? '/usr/bin/python3';

  it('allows bin/python, python3 and python3.N of a venv linking to the system Python', async () => {
    for (const name of ['python', 'python3', 'python3.11']) {
      const root = venvFolder(python, { name });
      assert.equal(await isVenvInterpreter(root, `.venv/bin/${name}`), true, name);
      assert.equal(await isVenvInterpreter(root, `./.venv/bin/${name}`), true, `./ ${name}`);
    }
    assert.equal(await isVenvInterpreter(venvFolder(python, { venv: 'sub/.quiver-venv' }), 'sub/.quiver-venv/bin/python'), true);
  });

  it('refuses a link to a Python outside /usr, to another program, or under another name', async () => {
    const elsewhere = join(base, 'opt-python3');
    writeFileSync(elsewhere, '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(await isVenvInterpreter(venvFolder(elsewhere), '.venv/bin/python'), false, 'a python3 outside /usr');
    assert.equal(await isVenvInterpreter(venvFolder('/usr/bin/env'), '.venv/bin/python'), false, 'a link named python to env');
    assert.equal(await isVenvInterpreter(venvFolder(python, { name: 'pip' }), '.venv/bin/pip'), false, 'not an interpreter name');
    assert.equal(await isVenvInterpreter(venvFolder(python, { name: 'python2' }), '.venv/bin/python2'), false);
  });

  it('refuses without a plain pyvenv.cfg naming home, and a path out of the folder', async () => {
    assert.equal(await isVenvInterpreter(venvFolder(python, { config: undefined }), '.venv/bin/python'), false, 'no pyvenv.cfg');
    assert.equal(await isVenvInterpreter(venvFolder(python, { config: 'version = 3.11\n' }), '.venv/bin/python'), false, 'no home line');
    const linked = venvFolder(python, { config: undefined });
    const outside = join(base, 'outside.cfg');
    writeFileSync(outside, 'home = /usr/bin\n');
    symlinkSync(outside, join(linked, '.venv', 'pyvenv.cfg'));
    assert.equal(await isVenvInterpreter(linked, '.venv/bin/python'), false, 'pyvenv.cfg is a link out of the folder');
    const root = venvFolder(python);
    assert.equal(await isVenvInterpreter(join(root, '.venv'), '../.venv/bin/python'), false, 'a path that leaves the folder');
  });

  it("the launch check takes a venv's python in a folder's quiver.json, and still refuses other links out", async () => {
    const root = venvFolder(python);
    writeFileSync(join(root, 'server.py'), 'print("hi")\n');
    const launch = await resolveLaunch({ root, relativeFolder: '.', launch: { transport: 'stdio', command: './.venv/bin/python', args: ['server.py'], env: [], cwd: '.' } });
    assert.equal(launch.transport, 'stdio');
    const other = venvFolder('/usr/bin/env');
    await assert.rejects(
      resolveLaunch({ root: other, relativeFolder: '.', launch: { transport: 'stdio', command: './.venv/bin/python', args: [], env: [], cwd: '.' } }),
      /leads outside the plugin's folder/,
    );
  });
});
