/**
 * @module test/helpers/inspector-v2
 * The MCP Inspector 2.x (`@modelcontextprotocol/inspector`), whose CLI runs the MCP
 * authorization flow itself (discovery from a 401, registration, authorization code + PKCE
 * with a loopback callback), for the OAuth tests of issue #27. It needs Node >= 22.19 while the
 * project's tests run on the Node that runs them, so both come from the npm registry and are
 * kept in a cache folder ($QUIVER_NODE_CACHE, default $TMPDIR/quiver-node-cache, shared with
 * scripts/node-smoke.mjs): Node from `node-<platform>-<arch>`, the Inspector installed with npm
 * (scripts ignored). Filled once, in a sibling folder renamed into place, so an interrupted
 * fetch leaves no half cache.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const INSPECTOR_VERSION = '2.12.0';
/** A Node the Inspector accepts (engines >= 22.19.0), the 22 line of scripts/node-smoke.mjs. */
export const INSPECTOR_NODE_VERSION = '22.23.3';

const cache = resolve(process.env.QUIVER_NODE_CACHE ?? join(tmpdir(), 'quiver-node-cache'));

function filledOnce(folder: string, fill: (partial: string) => void): void {
  if (existsSync(folder)) return;
  const partial = `${folder}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    fill(partial);
    renameSync(partial, folder);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The Node binary and the Inspector's launcher script (`mcp-inspector`), fetched on first use. */
export function ensureInspectorV2(): { node: string; launcher: string } {
  const nodeFolder = join(cache, `node-${INSPECTOR_NODE_VERSION}`);
  filledOnce(nodeFolder, (partial) => {
    const tarball = execFileSync('npm', ['pack', `node-${process.platform}-${process.arch}@${INSPECTOR_NODE_VERSION}`, '--silent', '--pack-destination', partial], { encoding: 'utf8', timeout: 600_000 }).trim().split('\n').pop()!;
    execFileSync('tar', ['-xzf', join(partial, tarball), '-C', partial]);
    rmSync(join(partial, tarball));
  });
  const inspectorFolder = join(cache, `inspector-${INSPECTOR_VERSION}`);
  filledOnce(inspectorFolder, (partial) => {
    writeFileSync(join(partial, 'package.json'), JSON.stringify({ name: 'quiver-inspector-cache', private: true }));
    execFileSync('npm', ['install', `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: partial, stdio: 'ignore', timeout: 600_000 });
  });
  const node = join(nodeFolder, 'package', 'bin', 'node');
  const launcher = join(inspectorFolder, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
  if (!existsSync(node) || !existsSync(launcher)) throw new Error(`the Inspector cache at ${cache} is incomplete (${node}, ${launcher}); remove it and run again`);
  return { node, launcher };
}
