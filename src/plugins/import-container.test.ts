import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerRunArgs, detectEngines, parseContainerRun, planContainerEntry, type ContainerRun } from './import-container.ts';

const parsed = (engine: 'docker' | 'podman', args: string[]): ContainerRun => {
  const run = parseContainerRun(engine, args);
  return 'reason' in run ? assert.fail(run.reason) : run;
};
const refused = (args: string[]): string => {
  const run = parseContainerRun('docker', args);
  return 'reason' in run ? run.reason : assert.fail(`expected a refusal of ${args.join(' ')}`);
};

describe('container entries (import-container.ts, issue #26)', () => {
  it("translates docker run to the sandbox's rules: no capabilities, read-only root, no network, -i, credentials by name, bind mounts", () => {
    const run = parsed('docker', ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', '--env=MODE=fast', '-v', '/srv/data:/data:ro', '--mount', 'type=bind,src=/srv/out,dst=/out', '--network', 'host', '-p', '8080:8080', 'ghcr.io/github/github-mcp-server', 'stdio', '--toolsets', 'repos']);
    assert.equal(run.image, 'ghcr.io/github/github-mcp-server');
    assert.deepEqual(run.args, ['stdio', '--toolsets', 'repos']);
    assert.deepEqual(run.envNames, ['GITHUB_PERSONAL_ACCESS_TOKEN', 'MODE']);
    assert.deepEqual(run.mounts, [{ host: '/srv/data', container: '/data', mode: 'ro' }, { host: '/srv/out', container: '/out', mode: 'rw' }]);
    assert.match(run.warnings.join('\n'), /MODE=… on the command line: passed by name/);
    assert.match(run.warnings.join('\n'), /--network host is replaced/);
    assert.match(run.warnings.join('\n'), /-p 8080:8080 is replaced/);
    const args = containerRunArgs(run, { egress: false });
    const pair = (flag: string) => args[args.indexOf(flag) + 1];
    assert.deepEqual(args.slice(0, 3), ['run', '--rm', '-i']);
    assert.equal(pair('--cap-drop'), 'ALL');
    assert.equal(pair('--security-opt'), 'no-new-privileges');
    assert.ok(args.includes('--read-only'));
    assert.equal(pair('--network'), 'none');
    assert.equal(pair('--user'), '65534:65534');
    assert.ok(args.includes('GITHUB_PERSONAL_ACCESS_TOKEN') && !args.some((arg) => arg.includes('=fast')), 'values never on the command line');
    assert.ok(args.includes('type=bind,src=/srv/data,dst=/data,readonly'));
    assert.ok(args.includes('type=bind,src=/srv/out,dst=/out'));
    assert.deepEqual(args.slice(-4), ['ghcr.io/github/github-mcp-server', 'stdio', '--toolsets', 'repos']);
    assert.equal(containerRunArgs(run, { egress: true })[containerRunArgs(run, { egress: true }).indexOf('--network') + 1], 'bridge');
    assert.equal(parsed('podman', ['run', '-it', 'mcp/time']).image, 'mcp/time');
  });

  it('refuses what would loosen the rules, named volumes, unknown options and non-run commands', () => {
    assert.match(refused(['run', '--privileged', 'x']), /loosen/);
    assert.match(refused(['run', '--cap-add', 'NET_ADMIN', 'x']), /loosen/);
    assert.match(refused(['run', '-d', 'x']), /loosen/);
    assert.match(refused(['run', '-v', 'named:/data', 'x']), /named volume/);
    assert.match(refused(['run', '--mount', 'type=volume,src=v,dst=/d', 'x']), /only bind mounts/);
    assert.match(refused(['run', '--frobnicate', 'x']), /unknown docker run option '--frobnicate'/);
    assert.match(refused(['run', '-i']), /without an image/);
    assert.match(refused(['compose', 'up']), /only 'docker run … IMAGE'/);
  });

  it('refuses an entry with the exact command when no engine can run it (none on PATH, or a client without its daemon)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'quiver-no-engine-'));
    try {
      const planned = planContainerEntry('docker', ['run', '-i', '--rm', '-e', 'TOKEN', 'ghcr.io/github/github-mcp-server'], { plugin: 'github', searchPath: empty });
      const none = 'reason' in planned ? planned : assert.fail('no engine on an empty PATH: refused');
      assert.match(none.reason, /neither docker nor podman is on PATH/);
      assert.match(none.reason, /apt-get install -y podman/);
      assert.ok(none.reason.includes('docker run --rm -i --cap-drop ALL --security-opt no-new-privileges --read-only'), none.reason);
      assert.match(none.reason, /quiver plugin add https:\/\/api\.githubcopilot\.com\/mcp\/ --name github/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    // A docker client without its daemon (a script standing in for the CLI, failing 'info' as it does) is reported broken.
    const clientOnly = mkdtempSync(join(tmpdir(), 'quiver-docker-client-'));
    try {
      writeFileSync(join(clientOnly, 'docker'), '#!/bin/sh\necho "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2\nexit 1\n', { mode: 0o755 });
      const planned = planContainerEntry('docker', ['run', '-i', 'mcp/time'], { plugin: 'time', searchPath: clientOnly });
      assert.ok('reason' in planned && planned.reason.includes('docker is installed but cannot run containers (Cannot connect to the Docker daemon'), JSON.stringify(planned));
    } finally {
      rmSync(clientOnly, { recursive: true, force: true });
    }
  });

  it('with a working engine (podman, provisioned by scripts/provision/system.sh), plans a container:IMAGE plugin: grants, rewritten paths, secrets by name', () => {
    const working = detectEngines().filter((engine) => engine.problem === undefined);
    assert.ok(working.length > 0, `no container engine runs here: ${JSON.stringify(detectEngines())}`);
    const planned = planContainerEntry('docker', ['run', '-i', '--rm', '-e', 'TOKEN', '-e', 'MODE=fast', '-v', '/srv/data:/data:ro', 'localhost/quiver-not-built:1', '/data', '--root=/data/sub'], { plugin: 'boxed', env: { TOKEN: 't0k' } });
    const plan = 'install' in planned ? planned.install : assert.fail(planned.reason);
    assert.equal(plan.source, 'container:localhost/quiver-not-built:1');
    assert.deepEqual(plan.args, ['/srv/data', '--root=/srv/data/sub'], 'the container-side path becomes the host path it is bound at');
    assert.deepEqual(plan.mounts, [{ path: '/srv/data', mode: 'ro' }]);
    assert.deepEqual(plan.secrets, { TOKEN: 't0k', MODE: 'fast' });
    assert.equal(plan.pull, true, 'the engine does not have this image');
    assert.match(plan.warnings.join('\n'), /bound at the same path inside the container/);
  });
});
