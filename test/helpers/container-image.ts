/**
 * @module test/helpers/container-image
 * A container image built here, from nothing pulled (no registry is reachable on the test
 * machines): the Node binary and the shared libraries `ldd` names, plus an MCP server bundled
 * with its dependencies by esbuild, imported as an image with `podman import`. Named by the
 * content's hash, so a second run (and the second backend) reuses it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { workingEngine } from '../../src/runtime/container.ts';

const repoRoot = join(import.meta.dirname, '..', '..');

/** The engine the tests use: the one Quiver finds; fails (never skips) when none runs here. */
export function testEngine(): string {
  const { engine, found } = workingEngine(process.env.PATH ?? '/usr/bin:/bin');
  if (engine === undefined) throw new Error(`no container engine runs here (scripts/provision/system.sh installs podman): ${JSON.stringify(found)}`);
  return engine.path;
}

/** Builds (or finds) the image of `serverFile` (an ES module importing the SDK); returns its reference. */
export function buildServerImage(serverFile: string, name: string): string {
  const engine = testEngine();
  const work = mkdtempSync(join(tmpdir(), 'quiver-image-'));
  try {
    const rootfs = join(work, 'rootfs');
    mkdirSync(join(rootfs, 'app'), { recursive: true });
    mkdirSync(join(rootfs, 'tmp'), { recursive: true });
    execFileSync(join(repoRoot, 'node_modules', '.bin', 'esbuild'), [serverFile, '--bundle', '--platform=node', '--format=esm', `--outfile=${join(rootfs, 'app', 'server.mjs')}`, '--log-level=warning'], { cwd: repoRoot, stdio: 'pipe' });
    const files = [process.execPath, ...execFileSync('ldd', [process.execPath], { encoding: 'utf8' }).split('\n').map((line) => /(\/\S+)\s+\(0x/.exec(line)?.[1]).filter((path): path is string => path !== undefined)];
    const hash = createHash('sha256').update(readFileSync(join(rootfs, 'app', 'server.mjs')));
    for (const file of files) {
      const target = join(rootfs, file === process.execPath ? '/usr/bin/node' : file);
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(file, target);
      hash.update(file).update(String(readFileSync(file).length));
    }
    const reference = `localhost/${name}:${hash.digest('hex').slice(0, 16)}`;
    const exists = (() => {
      try {
        execFileSync(engine, ['image', 'inspect', '--format', '{{.Id}}', reference], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    if (!exists) {
      const tar = join(work, 'rootfs.tar');
      execFileSync('tar', ['-C', rootfs, '-cf', tar, '.']);
      execFileSync(engine, ['import', '--quiet', '--change', 'ENTRYPOINT ["/usr/bin/node", "/app/server.mjs"]', tar, reference], { stdio: 'pipe', timeout: 300_000 });
    }
    return reference;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
