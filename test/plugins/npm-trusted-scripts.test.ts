/**
 * Issue #23: `--trusted` npm installs run the package's lifecycle scripts in the plugin sandbox,
 * never on the host as the hub's user. A real npm install of a real package tarball (made with
 * `npm pack`) whose postinstall script records who ran it and tries the network and the hub's
 * home; the real one-shot sandbox (bubblewrap). Without a sandbox a trusted install is refused.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmInstall, NpmInstallError } from '../../src/plugins/npm.ts';
import { runOneShot } from '../../src/runtime/one-shot.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { skipUnless } from '../helpers/requirements.ts';

const host = detectHost();
const skip = skipUnless(!host.bubblewrap && `bubblewrap is not usable here: ${host.bubblewrapProblem}`);

// Writes what it could do into its own folder: its uid, whether a TCP connect to a public
// address worked, and whether it could read a file of the hub's home.
const POSTINSTALL = `
const fs = require('fs');
const net = require('net');
const out = (name, value) => fs.writeFileSync(name, String(value));
out('uid.txt', process.getuid());
try { out('secret.txt', fs.readFileSync(process.env.QUIVER_TEST_SECRET || '/nonexistent', 'utf8')); } catch (error) { out('secret.txt', 'unreadable: ' + error.code); }
const socket = net.connect({ host: '1.1.1.1', port: 80, timeout: 2000 });
socket.on('connect', () => { out('net.txt', 'connected'); socket.destroy(); });
socket.on('error', (error) => out('net.txt', 'refused: ' + error.code));
socket.on('timeout', () => { out('net.txt', 'timeout'); socket.destroy(); });
`;

describe('npm --trusted: lifecycle scripts in the sandbox (issue #23)', { skip }, () => {
  let root: string;
  let tarball: string;
  let secret: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-npm-trusted-'));
    chmodSync(root, 0o755);
    const pkg = join(root, 'pkg');
    execFileSync('mkdir', ['-p', pkg]);
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'quiver-trusted-fixture', version: '1.0.0', scripts: { postinstall: 'node postinstall.js' } }));
    writeFileSync(join(pkg, 'postinstall.js'), POSTINSTALL);
    tarball = join(root, execFileSync('npm', ['pack', '--silent', '--pack-destination', root], { cwd: pkg, encoding: 'utf8' }).trim().split('\n').pop()!);
    // Stands for the hub's secrets: readable only by the hub's user.
    secret = join(root, 'secret.key');
    writeFileSync(secret, 'hub-secret', { mode: 0o600 });
  });
  after(() => rm(root));

  it("runs the package's postinstall as the sandbox user with no network, and it cannot read the hub's files", { timeout: 180_000 }, async () => {
    const folder = join(root, 'install');
    const installed = await npmInstall(tarball, folder, {
      trusted: true,
      timeoutMs: 120_000,
      cacheDir: join(root, 'npm-cache'),
      runSandboxed: (request) => runOneShot({ ...request, env: { ...request.env, QUIVER_TEST_SECRET: secret } }, { host, dangerouslyAllowUnsandboxed: false }),
    });
    assert.equal(installed.packageName, 'quiver-trusted-fixture');
    const packageFolder = join(folder, installed.packageFolder);
    const read = (name: string) => readFileSync(join(packageFolder, name), 'utf8');
    assert.ok(existsSync(join(packageFolder, 'uid.txt')), 'the postinstall script ran');
    if (process.getuid?.() === 0) assert.equal(read('uid.txt'), '65534', 'run as the unprivileged sandbox user, not root');
    assert.notEqual(read('net.txt'), 'connected', 'no network in the sandbox');
    assert.ok(!read('secret.txt').includes('hub-secret'), `the hub's secret was read: ${read('secret.txt')}`);
  });

  it('an untrusted install runs no script at all', { timeout: 180_000 }, async () => {
    const folder = join(root, 'untrusted');
    const installed = await npmInstall(tarball, folder, { trusted: false, timeoutMs: 120_000, cacheDir: join(root, 'npm-cache') });
    assert.ok(!existsSync(join(folder, installed.packageFolder, 'uid.txt')));
  });
});

describe('npm --trusted without a sandbox (issue #23)', () => {
  it('is refused before anything is fetched, saying what is missing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-npm-nosandbox-'));
    try {
      await assert.rejects(
        npmInstall('quiver-never-fetched@1.0.0', folder, { trusted: true, timeoutMs: 10_000 }),
        (error: unknown) => error instanceof NpmInstallError && /install scripts in the plugin sandbox, and there is none here/.test(error.message),
      );
      assert.ok(!existsSync(join(folder, 'node_modules')));
    } finally {
      rm(folder);
    }
  });
});

function rm(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
