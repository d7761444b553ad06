/**
 * No plugin process outlives Quiver, even when Quiver is killed with SIGKILL and runs none of
 * its cleanup (DESIGN §3.6 "clean kill of the whole process tree"). A child node process plays
 * Quiver (test/fixtures/plugins/supervisor-host.ts); every process its plugins started carries
 * the supervisor's marker in its environment, so /proc finds them even after re-parenting.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import { isAlive, signalProcess } from '../../src/runtime/process-tree.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { eventually, fixturesDir, leftovers, repositoryRoot } from './helpers.ts';
import { skipUnless } from '../helpers/requirements.ts';

interface HostReport {
  supervisorId: string;
  plugins: Array<{ trustLevel: string; leader: number; server: number; grandchild: number }>;
}

async function startHost(options: object): Promise<{ pid: number; report: HostReport }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(fixturesDir, 'supervisor-host.ts'), JSON.stringify(options)], {
    cwd: repositoryRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`host exited early with ${code}`)));
  });
  return { pid: child.pid!, report: JSON.parse(line) as HostReport };
}

const host = detectHost();

function findCgroups(prefix: string, directory = '/sys/fs/cgroup', depth = 0): string[] {
  if (depth > 4) return [];
  let names: string[] = [];
  try {
    names = readdirSync(directory, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
  return names.flatMap((name) => (name.startsWith(prefix) ? [join(directory, name)] : findCgroups(prefix, join(directory, name), depth + 1)));
}

describe('no orphans when Quiver is SIGKILLed', () => {
  it('with bubblewrap: sandboxed and trusted plugins die with their whole trees', { skip: skipUnless(!host.bubblewrap && 'bubblewrap is unavailable') }, async () => {
    const { pid, report } = await startHost({ trustLevels: ['UNVERIFIED', 'ENTERPRISE', 'OFFICIAL'] });
    const before = leftovers(report.supervisorId);
    // Per plugin: bwrap, its pid-1 and the server, plus the grandchild.
    assert.ok(before.length >= report.plugins.length * 3, `found ${before.length} plugin processes`);
    for (const plugin of report.plugins) assert.ok(isAlive(plugin.leader), `${plugin.trustLevel} leader alive`);
    process.kill(pid, 'SIGKILL');
    await eventually(() => leftovers(report.supervisorId).length === 0, 5_000, 'every plugin process gone');
    for (const plugin of report.plugins) assert.equal(isAlive(plugin.leader), false);
    // Sweep what the dead host left (the next test asserts that sweep).
    await eventually(() => !isAlive(pid), 5_000, 'host gone');
    const next = createSupervisor();
    next.host();
    await next.close();
  });

  // Its own test, skipped (and failing under CI) by name where the host has no cgroups, rather
  // than assertions behind a bare `if` that pass unseen on such a host (issue #28).
  it('with bubblewrap and cgroups: the next supervisor sweeps the cgroups a SIGKILLed host left behind', {
    skip: skipUnless((!host.bubblewrap && 'bubblewrap is unavailable') || (host.cgroups.kind === 'none' && 'no writable cgroup hierarchy (v1 or v2) for the supervisor')),
  }, async () => {
    const { pid, report } = await startHost({ trustLevels: ['UNVERIFIED'] });
    for (const plugin of report.plugins) assert.ok(isAlive(plugin.leader), `${plugin.trustLevel} leader alive`);
    // Looked for while the host lives: once it is dead, any supervisor that starts (another test
    // file's, at the same time) may sweep its cgroups before this test looks.
    assert.ok(findCgroups(`quiver-${pid}-`).length > 0, 'the host runs its plugins in cgroups named after it');
    process.kill(pid, 'SIGKILL');
    await eventually(() => !isAlive(pid), 5_000, 'host gone');
    await eventually(() => leftovers(report.supervisorId).length === 0, 5_000, 'every plugin process gone');
    // The dead Quiver could not remove its plugins' cgroups; the next supervisor sweeps them.
    const next = createSupervisor();
    next.host();
    assert.deepEqual(findCgroups(`quiver-${pid}-`), []);
    await next.close();
  });

  it('without bubblewrap (dangerouslyAllowUnsandboxed): setpriv --pdeathsig kills the plugin server itself', { skip: skipUnless(!host.setpriv && 'setpriv is unavailable') }, async () => {
    const { pid, report } = await startHost({ trustLevels: ['OFFICIAL'], bubblewrapPath: null, dangerouslyAllowUnsandboxed: true });
    const [plugin] = report.plugins;
    assert.ok(plugin && plugin.server === plugin.leader, 'the launcher execs into the server');
    process.kill(pid, 'SIGKILL');
    await eventually(() => !isAlive(plugin.server), 5_000, 'plugin server killed by its parent-death signal');
    // Documented limitation: a process the plugin itself detached survives without bubblewrap's
    // pid namespace. Clean it up here so the test leaves nothing behind.
    for (const leftover of leftovers(report.supervisorId)) signalProcess(leftover, 'SIGKILL');
    await eventually(() => leftovers(report.supervisorId).length === 0, 5_000, 'cleanup');
  });
});
