import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isolationPolicyFor } from './isolation-policy.ts';
import { buildLaunch, type HostCapabilities, type LaunchContext } from './sandbox.ts';
import { overlayLayout, unsafeOverlayPath } from './code-overlay.ts';
import { parseUpstreamSpec, type StdioSpec } from './types.ts';

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
    baseEnv: { PATH: '/usr/bin' },
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

  it('does not mirror folders when the sandbox already maps to the cache owner (not root, or no setpriv)', () => {
    for (const overrides of [{ isRoot: false }, { isRoot: true, setpriv: undefined }]) {
      const line = [buildLaunch(spec(), context({ host: host(overrides) })).command, ...buildLaunch(spec(), context({ host: host(overrides) })).args];
      assert.equal(line[line.indexOf('quiver-overlay') + 4], '0', JSON.stringify(overrides));
      assert.equal(line.includes('/usr/bin/setpriv'), false);
    }
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

  it('leaves specs without a codeDir, and trusted plugins, as they were', () => {
    const plain = buildLaunch(spec({ codeDir: undefined }), context());
    assert.equal(plain.description.codeFolder, undefined);
    assert.equal([plain.command, ...plain.args].includes('/usr/bin/unshare'), false);
    const trusted = buildLaunch(spec({ trustLevel: 'OFFICIAL' }), context({ policy: isolationPolicyFor('OFFICIAL') }));
    assert.equal(trusted.description.sandboxed, false);
    assert.equal(trusted.description.codeFolder, undefined);
  });
});

describe('buildLaunch: the launch environment', () => {
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
