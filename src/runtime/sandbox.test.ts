import { describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { isolationPolicyFor } from './isolation-policy.ts';
import { buildLaunch, type LaunchContext } from './sandbox.ts';
import { detectHost, detectHostAsync, type HostCapabilities } from './host-detection.ts';
import { overlayLayout, unsafeOverlayPath } from './code-overlay.ts';
import { parseUpstreamSpec, type StdioSpec } from './types.ts';
import { skipUnless } from '../../test/helpers/requirements.ts';

const tools = { unshare: '/usr/bin/unshare', mount: '/usr/bin/mount', find: '/usr/bin/find', xargs: '/usr/bin/xargs', mkdir: '/usr/bin/mkdir' };

function host(overrides: Partial<HostCapabilities> = {}): HostCapabilities {
  return {
    bubblewrap: '/usr/bin/bwrap',
    bubblewrapProblem: undefined,
    setpriv: '/usr/bin/setpriv',
    isRoot: true,
    cgroups: { kind: 'none', reason: 'test', create: () => { throw new Error('no'); }, sweepStale: () => 0 },
    overlay: tools,
    overlayProblem: undefined,
    ...overrides,
  };
}

function context(overrides: Partial<LaunchContext> = {}): LaunchContext {
  return {
    host: host(),
    policy: isolationPolicyFor('UNVERIFIED'),
    stateDir: '/var/lib/quiver/state/p',
    cgroupProcsFiles: [],
    searchPath: '/usr/local/bin:/usr/bin:/bin',
    marker: 'marker',
    dangerouslyAllowUnsandboxed: false,
    ...overrides,
  };
}

function spec(overrides: Record<string, unknown> = {}): StdioSpec {
  const parsed = parseUpstreamSpec({
    pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'UNVERIFIED', transport: 'stdio',
    command: 'sh', args: ['server.sh'], cwd: '/opt/cache/npm/x@1/node_modules/x', readOnlyPaths: ['/opt/cache/npm/x@1', '/opt/shared'],
    codeDir: '/opt/cache/npm/x@1', ...overrides,
  });
  if (parsed.transport !== 'stdio') throw new Error('stdio spec expected');
  return parsed;
}

/** The `--flag a b` triples of a bwrap command line. */
function binds(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1]!] : []));
}

describe('buildLaunch: a sandboxed plugin’s own folder (runtime/code-overlay.ts)', () => {
  it('mounts the install folder as an overlay kept in the state folder, as the sandbox user, before bwrap', () => {
    const launch = buildLaunch(spec(), context());
    const line = [launch.command, ...launch.args];
    const layout = overlayLayout('/var/lib/quiver/state/p', '/opt/cache/npm/x@1');
    const setpriv = line.indexOf('/usr/bin/setpriv');
    const unshare = line.indexOf('/usr/bin/unshare');
    const bwrap = line.indexOf('/usr/bin/bwrap');
    assert.ok(setpriv === 0 && setpriv < unshare && unshare < bwrap, line.join(' '));
    assert.deepEqual(line.slice(unshare, unshare + 7), ['/usr/bin/unshare', '--user', '--map-root-user', '--mount', '--propagation', 'private', '--']);
    // lower, upper, work, mirror (root with setpriv: folders are mirrored), then the tools.
    const script = line.indexOf('quiver-overlay');
    assert.deepEqual(line.slice(script + 1, script + 9), [layout.lower, layout.upper, layout.work, '1', tools.find, tools.xargs, tools.mkdir, tools.mount]);
    const sandbox = line.slice(bwrap);
    assert.deepEqual(binds(sandbox, '--bind'), ['/opt/cache/npm/x@1', '/var/lib/quiver/state/p']);
    assert.deepEqual(binds(sandbox, '--ro-bind').filter((path) => path.startsWith('/opt/')), ['/opt/shared'], 'nothing read-only hides the overlay');
    assert.ok(binds(sandbox, '--tmpfs').includes(layout.root), 'the layers are hidden from the plugin');
    assert.equal(launch.description.codeFolder, 'overlay');
    assert.deepEqual(launch.description.warnings.filter((w) => /read-only/.test(w)), []);
  });

  it('does not mirror folders when the sandbox already maps to the cache owner (not root); as root without setpriv it refuses (issue #23)', () => {
    const launch = buildLaunch(spec(), context({ host: host({ isRoot: false }) }));
    const line = [launch.command, ...launch.args];
    assert.equal(line[line.indexOf('quiver-overlay') + 4], '0');
    assert.equal(line.includes('/usr/bin/setpriv'), false);
    // A user namespace made by root maps the sandbox to root's files: that is root, not nobody.
    assert.throws(() => buildLaunch(spec(), context({ host: host({ isRoot: true, setpriv: undefined }) })), /would run as root/);
  });

  it('keeps the folder read-only, saying why, when the host has no overlay or a path cannot be a mount option', () => {
    const without = buildLaunch(spec(), context({ host: host({ overlay: undefined, overlayProblem: 'no overlay in user namespaces' }) }));
    assert.equal(without.description.codeFolder, 'read-only');
    assert.equal([without.command, ...without.args].includes('/usr/bin/unshare'), false);
    assert.ok(binds(without.args, '--ro-bind').includes('/opt/cache/npm/x@1'));
    assert.match(without.description.warnings.join('\n'), /read-only \(writes there fail with EROFS\): no overlay in user namespaces/);

    const comma = buildLaunch(spec({ codeDir: '/opt/a,b', readOnlyPaths: ['/opt/a,b'] }), context());
    assert.equal(comma.description.codeFolder, 'read-only');
    assert.match(comma.description.warnings.join('\n'), /overlayfs mount options cannot carry/);
    assert.equal(unsafeOverlayPath('/var/lib/quiver/plugins/npm/@scope+x@1.0.0'), undefined);
    for (const bad of ['/a:b', '/a b', '/a\\b', '/a\nb']) assert.ok(unsafeOverlayPath(bad), bad);
  });

  it('leaves specs without a codeDir as they were; an OFFICIAL plugin gets the same overlay (it is sandboxed too, issue #23)', () => {
    const plain = buildLaunch(spec({ codeDir: undefined }), context());
    assert.equal(plain.description.codeFolder, undefined);
    assert.equal([plain.command, ...plain.args].includes('/usr/bin/unshare'), false);
    const trusted = buildLaunch(spec({ trustLevel: 'OFFICIAL' }), context({ policy: isolationPolicyFor('OFFICIAL') }));
    assert.equal(trusted.description.sandboxed, true);
    assert.equal(trusted.description.codeFolder, 'overlay');
  });
});

describe("buildLaunch: the hub's own paths (issue #23)", () => {
  it('masks the hub home, data folder and key file where a folder given to the plugin contains them, after that bind', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-mask-'));
    try {
      const home = join(root, 'quiver');
      const data = join(home, 'data');
      const key = join(home, 'secret.key');
      const plugin = join(home, 'plugins', 'x');
      mkdirSync(data, { recursive: true });
      mkdirSync(plugin, { recursive: true });
      writeFileSync(key, 'k');
      const other = mkdtempSync(join(tmpdir(), 'quiver-other-'));
      // A key file kept elsewhere (QUIVER_SECRET_KEY_FILE-like) under a granted folder is /dev/null.
      const keyElsewhere = join(root, 'hub.key');
      writeFileSync(keyElsewhere, 'k');
      const alone = buildLaunch(spec({ cwd: plugin, codeDir: plugin, readOnlyPaths: [root] }), context({ hiddenPaths: [keyElsewhere] })).args;
      assert.ok(alone.findIndex((arg, i) => arg === '--ro-bind' && alone[i + 1] === '/dev/null' && alone[i + 2] === keyElsewhere) > alone.indexOf(root), 'the key file is /dev/null');
      for (const level of ['UNVERIFIED', 'OFFICIAL'] as const) {
        // An admin granted the plugin the folder holding the hub's home (read-only): the home is still masked.
        const launch = buildLaunch(spec({ trustLevel: level, cwd: plugin, codeDir: plugin, readOnlyPaths: [root] }), context({ policy: isolationPolicyFor(level), hiddenPaths: [home, data, key, other] }));
        const args = launch.args;
        const at = (flag: string, path: string) => args.findIndex((arg, i) => arg === flag && args[i + 1] === path);
        assert.ok(at('--ro-bind', root) >= 0, level);
        assert.ok(at('--tmpfs', home) > at('--ro-bind', root), `${level}: the home is masked after the folder that holds it`);
        assert.equal(at('--tmpfs', data), -1, `${level}: inside the masked home, the data folder needs no mask of its own`);
        assert.ok(at('--bind', plugin) > at('--tmpfs', home), `${level}: the plugin's own folder is bound on top of the mask`);
        assert.equal(at('--tmpfs', other), -1, 'a hub path no bind contains is simply never mounted');
      }
      rmSync(other, { recursive: true, force: true });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('buildLaunch: the launch environment', () => {
  it('keeps a working folder inside the writable state folder writable (a one-shot build in a monorepo package)', () => {
    const work = '/var/lib/quiver/state/p';
    const launch = buildLaunch(spec({ codeDir: undefined, readOnlyPaths: [], cwd: `${work}/tree/packages/server` }), context({ stateDir: work }));
    assert.ok(binds(launch.args, '--bind').includes(work));
    assert.ok(!binds(launch.args, '--ro-bind').some((path) => path.startsWith(`${work}/`)), launch.args.join(' '));
  });

  it('refuses dynamic-loader variables, which would act on the launch chain outside the sandbox', () => {
    for (const key of ['LD_PRELOAD', 'ld_library_path', 'LD_AUDIT', 'GCONV_PATH', 'MALLOC_CHECK_']) {
      assert.throws(
        () => buildLaunch(spec({ env: { [key]: '/tmp/evil.so' } }), context()),
        (error: unknown) => error instanceof Error && (error as { code?: string }).code === 'invalid_input' && error.message.includes(key),
        key,
      );
    }
    // Trusted plugins too: their launch chain also runs before the plugin.
    assert.throws(() => buildLaunch(spec({ env: { LD_PRELOAD: 'x' }, trustLevel: 'OFFICIAL' }), context({ policy: isolationPolicyFor('OFFICIAL') })));
  });

  it('passes ordinary variables through', () => {
    const launch = buildLaunch(spec({ env: { API_TOKEN: 'secret', LDAP_URL: 'ldap://x' } }), context());
    assert.equal(launch.env.API_TOKEN, 'secret');
    assert.equal(launch.env.LDAP_URL, 'ldap://x');
  });
});

describe('buildLaunch: host paths an admin granted (issue #26)', () => {
  it('binds a read-only grant with --ro-bind and a read-write one with --bind, at the same path', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-grant-'));
    try {
      const docs = join(root, 'docs');
      const notes = join(root, 'notes');
      mkdirSync(docs);
      mkdirSync(notes);
      const launch = buildLaunch(spec({ mounts: [{ path: docs, mode: 'ro' }, { path: notes, mode: 'rw' }, { path: join(root, 'gone'), mode: 'ro' }] }), context({ hiddenPaths: ['/var/lib/quiver'] }));
      assert.ok(binds(launch.args, '--ro-bind').includes(docs));
      assert.equal(binds(launch.args, '--bind').includes(docs), false);
      assert.ok(binds(launch.args, '--bind').includes(notes));
      assert.match(launch.description.warnings.join('\n'), /gone does not exist: not mounted/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses to launch with a grant that is, holds or sits inside a hub path, or that became a symbolic link (fail closed)', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-grant-'));
    try {
      const home = join(root, 'home', '.quiver');
      const data = join(home, 'data');
      mkdirSync(data, { recursive: true });
      const hidden = [home, data, join(home, 'secret.key')];
      for (const path of [home, data, join(root, 'home'), root, join(home, 'plugins')]) {
        assert.throws(() => buildLaunch(spec({ mounts: [{ path, mode: 'ro' }] }), context({ hiddenPaths: hidden })), /hub's own/, path);
      }
      const link = join(root, 'innocent');
      symlinkSync(join(root, 'home'), link);
      assert.throws(() => buildLaunch(spec({ mounts: [{ path: link, mode: 'rw' }] }), context({ hiddenPaths: hidden })), /hub's own/);
      const elsewhere = join(root, 'elsewhere');
      mkdirSync(elsewhere);
      const other = join(root, 'other-link');
      symlinkSync(elsewhere, other);
      assert.throws(() => buildLaunch(spec({ mounts: [{ path: other, mode: 'rw' }] }), context({ hiddenPaths: hidden })), /now leads to/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('detectHost and detectHostAsync: one probe, two ways to wait for it', () => {
  /** Event-loop turns (setImmediate) that ran while `work` was pending. */
  async function turnsDuring<T>(work: () => T | Promise<T>): Promise<{ value: T; turns: number }> {
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const value = await work();
    counting = false;
    return { value, turns };
  }
  const comparable = (found: HostCapabilities) => ({ ...found, cgroups: found.cgroups.kind });

  it('finds the same capabilities; the async probe lets the event loop run while its sandboxes start, the sync one blocks it', async () => {
    assert.deepEqual(comparable(await detectHostAsync()), comparable(detectHost()));
    // A "bubblewrap" that always fails: a probe process runs on every host, and both report it unusable.
    const failing = { bubblewrapPath: '/bin/false' };
    const sync = await turnsDuring(() => detectHost(failing));
    const async = await turnsDuring(() => detectHostAsync(failing));
    assert.deepEqual(comparable(async.value), comparable(sync.value));
    assert.equal(async.value.bubblewrap, undefined);
    assert.match(async.value.bubblewrapProblem ?? '', /bubblewrap is installed at \/bin\/false but cannot create a sandbox here: exit 1/);
    assert.equal(sync.turns, 0, 'the synchronous probe holds the event loop');
    assert.ok(async.turns > 0, 'the asynchronous probe waited for its process without holding the loop');
    // A missing bwrap is reported the same way by both.
    const missing = { bubblewrapPath: '/nonexistent/bwrap' };
    assert.deepEqual(comparable(await detectHostAsync(missing)), comparable(detectHost(missing)));
  });
});

describe('buildLaunch: a program under /tmp, which the sandbox replaces with its own tmpfs', () => {
  it('binds the folder of a program under /tmp read-only (a Node unpacked there, say)', () => {
    const launch = buildLaunch(spec({ command: '/tmp/tools/node-v22/bin/node', args: ['server.js'] }), context());
    assert.ok(binds(launch.args, '--ro-bind').includes('/tmp/tools/node-v22/bin'), launch.args.join(' '));
    // Programs under the folders the sandbox shows whole get no bind of their own.
    const usual = buildLaunch(spec({ command: '/usr/bin/env', args: ['node'] }), context());
    assert.ok(!binds(usual.args, '--ro-bind').includes('/usr/bin'), usual.args.join(' '));
  });

  const realHost = detectHost();
  it('runs it in a real sandbox', { skip: skipUnless(!realHost.bubblewrap && `bubblewrap is unusable: ${realHost.bubblewrapProblem}`) }, () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-program-'));
    const state = mkdtempSync(join(tmpdir(), 'quiver-program-state-'));
    try {
      chmodSync(folder, 0o755);
      chmodSync(state, 0o777);
      const program = join(folder, 'server.sh');
      writeFileSync(program, '#!/bin/sh\necho "started from $0"\n', { mode: 0o755 });
      const launch = buildLaunch(spec({ command: program, args: [], cwd: undefined, readOnlyPaths: [], codeDir: undefined, trustLevel: 'COMMUNITY' }), {
        ...context({ host: realHost, stateDir: state }),
        policy: isolationPolicyFor('COMMUNITY'),
      });
      assert.equal(launch.description.sandboxed, true);
      const run = spawnSync(launch.command, launch.args, { env: launch.env, cwd: launch.cwd, encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.stderr, '');
      assert.equal(run.stdout, `started from ${program}\n`);
      assert.equal(run.status, 0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
      rmSync(state, { recursive: true, force: true });
    }
  });
});
