import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isolationPolicyFor, trustLevelForScore } from './isolation-policy.ts';
import { buildLaunch, type LaunchContext } from './sandbox.ts';
import { type HostCapabilities } from './host-detection.ts';
import { createRedactor, redactorForSpec } from './redact.ts';
import { createCallWindow, healthScore, percentile } from './health.ts';
import { parseUpstreamSpec } from './types.ts';
import { isQuiverError } from '../core/errors.ts';

describe('trust → isolation (seed 000 §4.1, DESIGN §3.6)', () => {
  it('maps scores to levels at the table boundaries', () => {
    const cases: Array<[number, string]> = [[0, 'UNVERIFIED'], [39, 'UNVERIFIED'], [39.9, 'UNVERIFIED'], [40, 'COMMUNITY'], [59, 'COMMUNITY'], [60, 'ENTERPRISE'], [79, 'ENTERPRISE'], [80, 'VERIFIED_PUBLISHER'], [94, 'VERIFIED_PUBLISHER'], [95, 'OFFICIAL'], [100, 'OFFICIAL'], [Number.NaN, 'UNVERIFIED'], [-5, 'UNVERIFIED']];
    for (const [score, level] of cases) assert.equal(trustLevelForScore(score), level, `score ${score}`);
  });

  it('gives each level its policy: every level sandboxed (issue #23)', () => {
    assert.deepEqual(
      (['UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL'] as const).map((level) => {
        const policy = isolationPolicyFor(level);
        return [level, policy.sandbox, policy.network, policy.limits !== undefined];
      }),
      [
        ['UNVERIFIED', true, 'none', true],
        ['COMMUNITY', true, 'allow-list', true],
        ['ENTERPRISE', true, 'allow-list', true],
        ['VERIFIED_PUBLISHER', true, 'host', false],
        ['OFFICIAL', true, 'host', false],
      ],
    );
  });

  it('holds a plugin with egress rules to its allow-list at every level above UNVERIFIED', () => {
    const withRules = (level: 'ENTERPRISE' | 'VERIFIED_PUBLISHER' | 'OFFICIAL') => {
      const policy = isolationPolicyFor(level, {}, { egressRules: true });
      return [policy.sandbox, policy.network, policy.limits !== undefined];
    };
    assert.deepEqual(withRules('ENTERPRISE'), [true, 'allow-list', true]);
    assert.deepEqual(withRules('VERIFIED_PUBLISHER'), [true, 'allow-list', false]);
    assert.deepEqual(withRules('OFFICIAL'), [true, 'allow-list', false]);
  });

  it('lets a spec override limits field by field', () => {
    assert.deepEqual(isolationPolicyFor('UNVERIFIED', { memoryMb: 64 }).limits, { memoryMb: 64, cpus: 1, pids: 128 });
  });
});

function host(overrides: Partial<HostCapabilities> = {}): HostCapabilities {
  return {
    bubblewrap: '/usr/bin/bwrap',
    bubblewrapProblem: undefined,
    setpriv: '/usr/bin/setpriv',
    isRoot: true,
    cgroups: { kind: 'none', reason: 'test', create: () => { throw new Error('no'); }, sweepStale: () => 0 },
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

const spec = parseUpstreamSpec({
  pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'UNVERIFIED', transport: 'stdio',
  command: 'sh', args: ['server.sh'], cwd: '/opt/plugins/p', env: { API_TOKEN: 'tok-123456789' },
});
if (spec.transport !== 'stdio') throw new Error('stdio spec expected');

describe('buildLaunch', () => {
  it('sandboxes UNVERIFIED plugins: nobody, no network, read-only plugin folder, own state folder, fresh namespaces', () => {
    const launch = buildLaunch(spec, context());
    const line = [launch.command, ...launch.args].join(' ');
    assert.equal(launch.command, '/usr/bin/setpriv');
    assert.match(line, /--reuid 65534 --regid 65534 --clear-groups --inh-caps=-all --no-new-privs \/usr\/bin\/bwrap/);
    for (const flag of ['--die-with-parent', '--new-session', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--tmpfs /tmp', '--ro-bind /usr /usr', '--ro-bind /opt/plugins/p /opt/plugins/p', '--bind /var/lib/quiver/state/p /var/lib/quiver/state/p', '--uid 65534']) {
      assert.ok(line.includes(flag), `missing ${flag}`);
    }
    assert.ok(!line.includes('tok-123456789'), 'credentials never appear on the command line');
    assert.deepEqual(Object.keys(launch.env).sort(), ['API_TOKEN', 'HOME', 'LANG', 'NODE_OPTIONS', 'PATH', 'QUIVER_SUPERVISOR_ID', 'TMPDIR'].filter((key) => key !== 'NODE_OPTIONS'));
    assert.equal(launch.env.HOME, '/var/lib/quiver/state/p');
    assert.deepEqual(launch.description, { sandboxed: true, network: 'none', treeGuard: 'bubblewrap-pid-namespace', limits: 'none', warnings: [launch.description.warnings[0]!] });
    assert.match(launch.description.warnings[0]!, /CPU, memory and process count are not limited/);
  });

  it('gives COMMUNITY no network without an egress mount (fail closed)', () => {
    const launch = buildLaunch(spec, context({ policy: isolationPolicyFor('COMMUNITY') }));
    assert.ok(launch.args.includes('--unshare-net'));
    assert.ok(!launch.args.includes('/etc/resolv.conf'));
    assert.equal(launch.description.network, 'none');
  });

  it('runs an allow-list sandbox in a prepared network namespace, behind the bridge, with generated hosts and resolv.conf', () => {
    const egress = { folder: '/tmp/q-net', socketFolder: '/tmp/q-egress', configPath: '/tmp/q-net/bridge.json', hostsFile: '/tmp/q-net/hosts', resolvFile: '/tmp/q-net/resolv.conf', addresses: ['10.0.0.5/32'] };
    const launch = buildLaunch(spec, context({ policy: isolationPolicyFor('COMMUNITY'), egress, host: host({ egressNet: { unshare: '/usr/bin/unshare', ip: '/usr/sbin/ip' } }) }));
    const all = [launch.command, ...launch.args];
    assert.ok(!all.includes('--unshare-net'));
    assert.equal(launch.description.network, 'allow-list');
    const net = all.indexOf('/usr/bin/unshare');
    assert.deepEqual(all.slice(net, net + 5), ['/usr/bin/unshare', '--user', '--map-root-user', '--net', '--']);
    assert.ok(net < all.indexOf('/usr/bin/bwrap'));
    assert.deepEqual(all.slice(all.indexOf('/usr/sbin/ip'), all.indexOf('/usr/sbin/ip') + 3), ['/usr/sbin/ip', '10.0.0.5/32', '--']);
    const hosts = all.indexOf('/tmp/q-net/hosts');
    assert.deepEqual(all.slice(hosts - 1, hosts + 2), ['--ro-bind', '/tmp/q-net/hosts', '/etc/hosts']);
    const separator = all.lastIndexOf('--');
    assert.deepEqual(all.slice(separator + 1, separator + 3), [process.execPath, '-e']);
    assert.equal(all[separator + 4], '/tmp/q-net/bridge.json');
    assert.throws(() => buildLaunch(spec, context({ policy: isolationPolicyFor('COMMUNITY'), egress, host: host({ egressNet: undefined }) })), /needs 'unshare'/);
  });

  it('joins cgroups before anything runs', () => {
    const launch = buildLaunch(spec, context({ cgroupProcsFiles: ['/sys/fs/cgroup/q/cgroup.procs'] }));
    assert.equal(launch.command, '/bin/sh');
    assert.equal(launch.args[3], '/sys/fs/cgroup/q/cgroup.procs');
    assert.equal(launch.args[4], '--');
    assert.equal(launch.description.limits, 'cgroup');
  });

  it('falls back to the Node heap flag for node plugins without cgroups', () => {
    const nodeSpec = { ...spec, command: process.execPath };
    const launch = buildLaunch(nodeSpec, context());
    assert.equal(launch.env.NODE_OPTIONS, '--max-old-space-size=512');
    assert.equal(launch.description.limits, 'node-heap-flag');
  });

  it('refuses to run a sandbox-level plugin without bubblewrap, naming the fix and the override', () => {
    assert.throws(
      () => buildLaunch(spec, context({ host: host({ bubblewrap: undefined, bubblewrapProblem: 'bubblewrap (bwrap) is not installed' }) })),
      (error) => isQuiverError(error, 'unavailable') && /bubblewrap/.test(error.message) && /QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED/.test(error.message),
    );
  });

  it('runs it unsandboxed, with a warning, only when dangerouslyAllowUnsandboxed is set, and still as nobody with the cleared environment', () => {
    const launch = buildLaunch(spec, context({ host: host({ bubblewrap: undefined }), dangerouslyAllowUnsandboxed: true }));
    assert.equal(launch.description.sandboxed, false);
    assert.equal(launch.description.treeGuard, 'pdeathsig');
    assert.deepEqual([launch.command, ...launch.args.slice(0, 9)], ['/usr/bin/setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups', '--inh-caps=-all', '--no-new-privs', '--pdeathsig', 'SIGKILL']);
    assert.deepEqual(Object.keys(launch.env).sort(), ['API_TOKEN', 'HOME', 'LANG', 'PATH', 'QUIVER_SUPERVISOR_ID', 'TMPDIR']);
    assert.ok(launch.description.warnings.some((warning) => /without a sandbox/.test(warning)));
    assert.throws(
      () => buildLaunch(spec, context({ host: host({ bubblewrap: undefined, setpriv: undefined }), dangerouslyAllowUnsandboxed: true })),
      (error) => isQuiverError(error, 'unavailable') && /would run as root/.test(error.message),
    );
  });

  it('sandboxes OFFICIAL plugins too (issue #23): nobody, no capability, host network, the cleared environment', () => {
    const trusted = { ...spec, trustLevel: 'OFFICIAL' as const };
    const launch = buildLaunch(trusted, context({ policy: isolationPolicyFor('OFFICIAL') }));
    const line = [launch.command, ...launch.args].join(' ');
    assert.equal(launch.command, '/usr/bin/setpriv');
    assert.match(line, /--reuid 65534 .* \/usr\/bin\/bwrap /);
    assert.ok(!line.includes('--dev-bind'), 'never the whole host filesystem');
    assert.ok(!line.includes('--cap-add'), 'never a capability');
    assert.ok(!launch.args.includes('--unshare-net'), 'the host network');
    assert.ok(line.includes('--ro-bind-try /etc/resolv.conf /etc/resolv.conf'));
    assert.equal(launch.env.HOME, '/var/lib/quiver/state/p', 'not the hub environment');
    assert.equal(launch.env.USER, undefined);
    assert.equal(launch.env.API_TOKEN, 'tok-123456789');
    assert.equal(launch.description.network, 'host');
    assert.throws(() => buildLaunch(trusted, context({ policy: isolationPolicyFor('OFFICIAL'), host: host({ bubblewrap: undefined }) })), /must run in a bubblewrap sandbox/);
  });

  it('names a missing command', () => {
    assert.throws(() => buildLaunch({ ...spec, command: 'no-such-command-xyz' }, context()), /no-such-command-xyz/);
  });
});

describe('redaction', () => {
  it('hides every secret value, longest first, and bearer tokens inside headers', () => {
    const redact = createRedactor(['abcd1234', 'abcd1234efgh', 'no']);
    assert.equal(redact('x abcd1234efgh y abcd1234 no'), 'x [redacted] y [redacted] no');
    const http = parseUpstreamSpec({ pluginId: 'h', pluginName: 'h', version: '1', trustLevel: 'OFFICIAL', transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer s3cr3t-token-value' } });
    assert.equal(redactorForSpec(http)('auth failed for s3cr3t-token-value'), 'auth failed for [redacted]');
  });
});

describe('health window and score', () => {
  it('computes success rate and nearest-rank percentiles over the window', () => {
    let now = 0;
    const window = createCallWindow({ now: () => now }, 4, 1_000);
    for (const latency of [10, 20, 30, 40, 50]) window.record({ at: now, latencyMs: latency, ok: latency !== 30 });
    const stats = window.stats();
    assert.equal(stats.calls, 4, 'only the last windowSize samples');
    assert.equal(stats.failures, 1);
    assert.equal(stats.p50LatencyMs, 30);
    assert.equal(stats.p95LatencyMs, 50);
    now = 2_000;
    assert.equal(window.stats().calls, 0, 'old samples expire');
    assert.equal(percentile([], 0.5), undefined);
  });

  it('scores 100 when healthy, 0 in a crash loop, half with an open breaker', () => {
    const healthy = { calls: 10, failures: 0, successRate: 1, p50LatencyMs: 5, p95LatencyMs: 10 };
    assert.equal(healthScore({ stats: healthy, timeoutMs: 30_000, breakerOpen: false, crashLoop: false }), 100);
    assert.equal(healthScore({ stats: healthy, timeoutMs: 30_000, breakerOpen: false, crashLoop: true }), 0);
    assert.equal(healthScore({ stats: healthy, timeoutMs: 30_000, breakerOpen: true, crashLoop: false }), 50);
    assert.equal(healthScore({ stats: { ...healthy, successRate: 0.5, p95LatencyMs: 30_000 }, timeoutMs: 30_000, breakerOpen: false, crashLoop: false }), 40);
  });
});
