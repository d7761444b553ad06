/**
 * Containment by trust level (DESIGN §3.6, seed 000 §4.1) with real processes: each test runs
 * a misbehaving fixture in the isolation its trust level gets and checks from the host side
 * that the misbehaviour stayed inside, while another plugin keeps answering.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isQuiverError } from '../../src/core/errors.ts';
import { descendantsOf, isAlive } from '../../src/runtime/process-tree.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { createSupervisor, type SupervisorOptions } from '../../src/runtime/supervisor.ts';
import { behaviourServer, eventually, firstText, fixtureSpec, leftovers, repositoryRoot } from './helpers.ts';
import { skipUnless } from '../helpers/requirements.ts';

const host = detectHost();
const skip = skipUnless(!host.bubblewrap && `bubblewrap is not usable here: ${host.bubblewrapProblem}`);

function make(options: SupervisorOptions = {}) {
  return createSupervisor({ stopGraceMs: 100, startTimeoutMs: 10_000, defaultTimeoutMs: 10_000, ...options });
}

let listener: Server;
let port = 0;
const secretDir = join('/var/tmp', `quiver-host-secret-${randomBytes(4).toString('hex')}`);
const secretFile = join(secretDir, 'secret.txt');

before(async () => {
  listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
  // World-readable on the host: only the sandbox's filesystem view can keep it out.
  mkdirSync(secretDir, { recursive: true });
  chmodSync(secretDir, 0o755);
  writeFileSync(secretFile, 'host secret', { mode: 0o644 });
});
after(() => {
  listener.close();
  rmSync(secretDir, { recursive: true, force: true });
});

describe('UNVERIFIED plugins run in a bubblewrap sandbox', { skip }, () => {
  it('as an unprivileged user with a cleared environment holding only declared credentials', async () => {
    const supervisor = make();
    const result = await supervisor.callTool(fixtureSpec('sandboxed-identity', { trustLevel: 'UNVERIFIED', env: { FIXTURE_SECRET: 'declared-credential' } }), 'whoami');
    const identity = JSON.parse(firstText(result));
    assert.notEqual(identity.uid, 0);
    assert.equal(identity.uid, 65534);
    assert.equal(identity.secret, 'declared-credential');
    const allowed = new Set(['FIXTURE_SECRET', 'HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR', 'QUIVER_SUPERVISOR_ID', 'NODE_OPTIONS']);
    assert.deepEqual(identity.envKeys.filter((key: string) => !allowed.has(key)), [], 'no host variable leaks in');
    assert.equal(identity.pid, 2, 'its own pid namespace');
    const health = supervisor.health()[0]!;
    assert.equal(health.launch?.sandboxed, true);
    assert.equal(health.launch?.network, 'none');
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });

  it('without network: a listening port on the host loopback is unreachable (COMMUNITY reaches it only on its allow-list)', async () => {
    const decisions: string[] = [];
    const supervisor = make({ sandbox: { onEgressDecision: (d) => decisions.push(`${d.pluginId} ${d.host}:${d.port} ${d.allowed}`) } });
    const blocked = firstText(await supervisor.callTool(fixtureSpec('no-net', { trustLevel: 'UNVERIFIED' }), 'connect', { host: '127.0.0.1', port }));
    assert.notEqual(blocked, 'connected');
    assert.match(blocked, /^error /);
    const unlisted = firstText(await supervisor.callTool(fixtureSpec('community-unlisted', { trustLevel: 'COMMUNITY', egress: [] }), 'connect', { host: '127.0.0.1', port }));
    assert.match(unlisted, /^error /, 'COMMUNITY with an empty allow-list reaches nothing');
    const allowed = firstText(await supervisor.callTool(fixtureSpec('community-net', { trustLevel: 'COMMUNITY', egress: [{ host: '127.0.0.1', port }] }), 'connect', { host: '127.0.0.1', port }));
    assert.equal(allowed, 'connected', 'COMMUNITY reaches what its allow-list names (issue #10)');
    assert.equal(supervisor.health().find((h) => h.pluginId === 'community-net')?.launch?.network, 'allow-list');
    await eventually(() => decisions.includes(`community-net 127.0.0.1:${port} true`));
    await supervisor.close();
  });

  it('cannot write outside its own folder; can write its own folder and a private /tmp', async () => {
    const stateRoot = mkdtempSync(join('/tmp', 'quiver-state-'));
    chmodSync(stateRoot, 0o711);
    const supervisor = make({ sandbox: { stateRoot } });
    const spec = fixtureSpec('writer', { trustLevel: 'UNVERIFIED' });
    const marker = `escape-${randomBytes(4).toString('hex')}`;
    const write = async (path: string) => firstText(await supervisor.callTool(spec, 'write-file', { path }));
    assert.match(await write(`/root/${marker}`), /^error (ENOENT|EROFS|EACCES)/);
    assert.equal(existsSync(`/root/${marker}`), false);
    assert.match(await write(join(repositoryRoot, 'tmp', marker)), /^error (EROFS|ENOENT|EACCES)/);
    assert.equal(existsSync(join(repositoryRoot, 'tmp', marker)), false);
    assert.match(await write(join(repositoryRoot, 'test/fixtures/plugins', marker)), /^error EROFS/, 'the plugin folder is read-only');
    assert.equal(await write(join(stateRoot, 'writer', 'own.txt')), 'written');
    assert.equal(readFileSync(join(stateRoot, 'writer', 'own.txt'), 'utf8'), 'written by a plugin');
    assert.equal(await write(`/tmp/${marker}`), 'written');
    assert.equal(existsSync(`/tmp/${marker}`), false, '/tmp inside is private');
    await supervisor.close();
    rmSync(stateRoot, { recursive: true, force: true });
  });

  it("cannot read a host file outside its binds, even a world-readable one", async () => {
    const supervisor = make();
    const spec = fixtureSpec('reader', { trustLevel: 'UNVERIFIED' });
    assert.match(firstText(await supervisor.callTool(spec, 'read-file', { path: secretFile })), /^error ENOENT/);
    assert.match(firstText(await supervisor.callTool(spec, 'read-file', { path: '/etc/shadow' })), /^error/);
    // OFFICIAL is sandboxed too (issue #23): it reads what is bound (its own folder), not the host.
    assert.match(firstText(await supervisor.callTool(fixtureSpec('reader-trusted'), 'read-file', { path: secretFile })), /^error ENOENT/);
    assert.match(firstText(await supervisor.callTool(fixtureSpec('reader-trusted'), 'read-file', { path: behaviourServer })), /^content /, 'the same call reads a bound file');
    await supervisor.close();
  });
});

describe('resource limits', { skip }, () => {
  const cgroupSkip = skipUnless(host.cgroups.kind === 'none' && `no usable cgroups: ${host.cgroups.reason}`);

  it('a memory leak is killed by the memory limit and reported; other plugins keep answering', { skip: cgroupSkip }, async () => {
    const supervisor = make({ restartBackoff: { initialMs: 10 } });
    const other = fixtureSpec('bystander');
    await supervisor.callTool(other, 'echo', { message: 'warm' });
    const leak = supervisor.callTool(fixtureSpec('leaky', { trustLevel: 'UNVERIFIED', limits: { memoryMb: 96 } }), 'leak', {}, { timeoutMs: 30_000 });
    let answered = 0;
    const bystander = (async () => {
      for (let index = 0; index < 20; index += 1) {
        assert.equal(firstText(await supervisor.callTool(other, 'echo', { message: String(index) })), String(index));
        answered += 1;
      }
    })();
    await assert.rejects(leak, (error) => {
      assert.ok(isQuiverError(error, 'unavailable'), String(error));
      assert.match(error.message, /out of memory|SIGKILL|code 137/);
      return true;
    });
    await bystander;
    assert.equal(answered, 20);
    const leaky = supervisor.health().find((entry) => entry.pluginId === 'leaky')!;
    assert.equal(leaky.launch?.limits, 'cgroup');
    assert.equal(leaky.recentCrashes, 1);
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });

  it('a fork bomb is bounded by the pids limit and its whole tree dies with it', { skip: cgroupSkip }, async () => {
    const supervisor = make();
    const spec = fixtureSpec('bomber', { trustLevel: 'UNVERIFIED', limits: { pids: 40 } });
    const result = JSON.parse(firstText(await supervisor.callTool(spec, 'forkbomb', { limit: 200 }, { timeoutMs: 30_000 })));
    assert.ok(result.failed > 0, `some forks must fail (spawned ${result.spawned})`);
    assert.ok(result.spawned < 40, `at most the pids limit (spawned ${result.spawned})`);
    const leader = supervisor.processes()[0]!.pid!;
    const tree = descendantsOf(leader);
    assert.ok(tree.length >= result.spawned);
    assert.equal(firstText(await supervisor.callTool(fixtureSpec('bystander-2'), 'echo', { message: 'still here' })), 'still here');
    await supervisor.stop('bomber');
    await eventually(() => tree.every((pid) => !isAlive(pid)), 5_000, 'every forked child killed');
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });

  it('ENTERPRISE plugins run sandboxed as nobody (issue #23), inside cgroup limits', { skip: cgroupSkip }, async () => {
    const supervisor = make();
    const identity = JSON.parse(firstText(await supervisor.callTool(fixtureSpec('enterprise', { trustLevel: 'ENTERPRISE' }), 'whoami')));
    assert.equal(identity.uid, 65534);
    const launch = supervisor.health()[0]!.launch!;
    assert.equal(launch.sandboxed, true);
    assert.equal(launch.limits, 'cgroup');
    await supervisor.close();
  });

  it('without cgroups, Node plugins get a heap limit and the limitation is reported', async () => {
    const supervisor = make({ sandbox: { useCgroups: false } });
    const identity = JSON.parse(firstText(await supervisor.callTool(fixtureSpec('heap-only', { trustLevel: 'ENTERPRISE', limits: { memoryMb: 128 } }), 'whoami')));
    assert.ok(identity.envKeys.includes('NODE_OPTIONS'));
    const launch = supervisor.health()[0]!.launch!;
    assert.equal(launch.limits, 'node-heap-flag');
    assert.ok(launch.warnings.some((warning) => /CPU and process count are not limited/.test(warning)));
    await supervisor.close();
  });
});

describe('when bubblewrap is missing', () => {
  it('refuses to start a plugin that needs a sandbox, naming bubblewrap and the override', async () => {
    const supervisor = make({ sandbox: { bubblewrapPath: null } });
    await assert.rejects(supervisor.callTool(fixtureSpec('needs-sandbox', { trustLevel: 'UNVERIFIED' }), 'echo', { message: 'x' }), (error) => {
      assert.ok(isQuiverError(error, 'unavailable'));
      assert.match(error.message, /bubblewrap/);
      assert.match(error.message, /QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED/);
      return true;
    });
    assert.deepEqual(leftovers(supervisor.id), [], 'nothing was started');
    assert.notEqual(supervisor.health()[0]!.state, 'crash-loop');
    // Every level needs the sandbox (issue #23): OFFICIAL is refused the same way.
    await assert.rejects(supervisor.callTool(fixtureSpec('trusted-anyway'), 'echo', { message: 'ok' }), /must run in a bubblewrap sandbox/);
    await supervisor.close();
  });

  it('runs it unsandboxed only with dangerouslyAllowUnsandboxed, and says so', async () => {
    const supervisor = make({ sandbox: { bubblewrapPath: null, dangerouslyAllowUnsandboxed: true } });
    await supervisor.callTool(fixtureSpec('dangerous', { trustLevel: 'UNVERIFIED' }), 'echo', { message: 'x' });
    const launch = supervisor.health()[0]!.launch!;
    assert.equal(launch.sandboxed, false);
    assert.ok(launch.warnings.some((warning) => /without a sandbox/.test(warning)));
    if (host.isRoot) {
      // Still never root (issue #23): setpriv drops it to nobody with no capability.
      const identity = JSON.parse(firstText(await supervisor.callTool(fixtureSpec('dangerous', { trustLevel: 'UNVERIFIED' }), 'whoami')));
      assert.equal(identity.uid, 65534);
    }
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });
});
