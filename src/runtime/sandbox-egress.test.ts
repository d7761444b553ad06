/**
 * The enforced allow-list of a sandboxed process (issue #10): a real bubblewrap sandbox with its
 * own network namespace, the real bridge inside, the real proxy outside, real TCP servers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressDecision, EgressRule } from './egress-proxy.ts';
import { isolationPolicyFor } from './isolation-policy.ts';
import { buildLaunch } from './sandbox.ts';
import { detectHost } from './host-detection.ts';
import { sandboxUid } from './sandbox-identity.ts';
import { hostsFileFor, planSandboxEgress, startSandboxEgress } from './sandbox-egress.ts';
import { stdioSpecSchema } from './types.ts';
import { skipUnless } from '../../test/helpers/requirements.ts';

describe('allow-list plan', () => {
  it('listens on IP rules where they are, gives names private loopback addresses, adds foreign addresses to lo', () => {
    const plan = planSandboxEgress([
      { host: '127.0.0.1', port: 5432 },
      { host: 'API.github.com', port: 443 },
      { host: 'api.github.com', port: 443 },
      { host: 'api.github.com', port: 80 },
      { host: '10.1.2.3', port: 6379 },
      { host: 'localhost', port: 8080 },
      { host: 'files.example', port: 443 },
    ]);
    assert.deepEqual(plan.names, { 'api.github.com': '127.77.0.2', 'files.example': '127.77.0.3' });
    assert.deepEqual(plan.addresses, ['10.1.2.3/32']);
    assert.deepEqual(
      plan.listeners.map((l) => `${l.address}:${l.port}→${l.target.host}:${l.target.port}`),
      ['127.0.0.1:5432→127.0.0.1:5432', '127.77.0.2:443→api.github.com:443', '127.77.0.2:80→api.github.com:80', '10.1.2.3:6379→10.1.2.3:6379', '127.0.0.1:8080→localhost:8080', '127.77.0.3:443→files.example:443'],
    );
    assert.match(hostsFileFor(plan), /^127\.0\.0\.1 localhost\n.*\n127\.77\.0\.2 api\.github\.com\n127\.77\.0\.3 files\.example\n$/s);
  });
});

const host = detectHost();

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '0.0.0.0', () => resolve((server.address() as { port: number }).port)));
}

/** Runs `script` with node in a COMMUNITY sandbox limited to `allow`; returns stdout and the decisions. */
async function runSandboxed(script: string, allow: EgressRule[], stateDir: string): Promise<{ code: number | null; stdout: string; stderr: string; decisions: EgressDecision[] }> {
  const decisions: EgressDecision[] = [];
  const egress = await startSandboxEgress({ label: 'probe', allow, onDecision: (decision) => decisions.push(decision) });
  try {
    const spec = stdioSpecSchema.parse({ transport: 'stdio', pluginId: 'probe', pluginName: 'probe', version: '1', trustLevel: 'COMMUNITY', command: process.execPath, args: ['-e', script] });
    const launch = buildLaunch(spec, {
      host, policy: isolationPolicyFor('COMMUNITY'), stateDir, cgroupProcsFiles: [], searchPath: '/usr/local/bin:/usr/bin:/bin',
      marker: 'test', dangerouslyAllowUnsandboxed: false, egress: egress.mount,
    });
    assert.equal(launch.description.network, 'allow-list');
    const child = spawn(launch.command, launch.args, { env: launch.env, cwd: launch.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr, decisions };
  } finally {
    await egress.close();
  }
}

describe('a COMMUNITY sandbox reaches exactly its allow-list', { skip: skipUnless(!host.bubblewrap && `bubblewrap is unusable: ${host.bubblewrapProblem}`) }, () => {
  let echo: Server;
  let other: Server;
  let port: number;
  let otherPort: number;
  let state: string;
  before(async () => {
    echo = createServer((socket) => socket.once('data', (chunk) => socket.end(`echo:${chunk.toString().trim()}`)));
    other = createServer((socket) => socket.end('should never be reached'));
    port = await listen(echo);
    otherPort = await listen(other);
    state = mkdtempSync(join(tmpdir(), 'quiver-egress-state-'));
    chmodSync(state, 0o700);
    if (host.isRoot) chownSync(state, sandboxUid, sandboxUid);
  });
  after(() => {
    echo.close();
    other.close();
    rmSync(state, { recursive: true, force: true });
  });

  // Inside the sandbox: the allowed loopback port, a port not on the list, the allowed host name,
  // a name not on the list (the "phone home"), and what the process may do.
  const client = (allowed: number, denied: number, name: string) => `
const net = require('node:net'); const dns = require('node:dns');
const talk = (port, host) => new Promise((resolve) => { const s = net.connect(port, host); let d = ''; s.on('connect', () => s.write('hi\\n')); s.on('data', (c) => d += c); s.on('close', () => resolve(d || 'closed-empty')); s.on('error', (e) => resolve(e.code)); });
const lookup = (n) => new Promise((resolve) => dns.lookup(n, (e, a) => resolve(e ? e.code : a)));
(async () => {
  console.log('loopback-allowed ' + await talk(${allowed}, '127.0.0.1'));
  console.log('loopback-denied ' + await talk(${denied}, '127.0.0.1'));
  console.log('name-allowed ' + await talk(${allowed}, '${name}'));
  console.log('name-denied ' + await lookup('phone-home.example'));
  const status = require('node:fs').readFileSync('/proc/self/status', 'utf8');
  console.log('uid ' + process.getuid() + ' caps ' + /CapEff:\\s*(\\S+)/.exec(status)[1]);
})();
`;

  it('allows the listed loopback port and host name, refuses the rest, logs every decision', async () => {
    const name = hostname().toLowerCase();
    const result = await runSandboxed(client(port, otherPort, name), [{ host: '127.0.0.1', port }, { host: name, port }], state);
    assert.equal(result.code, 0, result.stderr);
    const lines = Object.fromEntries(result.stdout.trim().split('\n').map((line) => [line.split(' ')[0], line.slice(line.indexOf(' ') + 1)]));
    assert.equal(lines['loopback-allowed'], 'echo:hi');
    assert.equal(lines['loopback-denied'], 'ECONNREFUSED', 'a port not on the list has no way out');
    assert.equal(lines['name-allowed'], 'echo:hi', 'an allowed name resolves to the bridge and reaches the real host through the proxy');
    assert.equal(lines['name-denied'], 'ENOTFOUND');
    assert.equal(lines['uid'], `${host.isRoot ? sandboxUid : process.getuid!()} caps 0000000000000000`);
    const seen = result.decisions.map((d) => `${d.host}:${d.port}:${d.allowed}`);
    assert.ok(seen.includes(`127.0.0.1:${port}:true`), seen.join(' '));
    assert.ok(seen.includes(`${name}:${port}:true`), seen.join(' '));
    assert.ok(seen.includes('phone-home.example:0:false'), seen.join(' '));
    assert.ok(!seen.some((entry) => entry.startsWith(`127.0.0.1:${otherPort}`)));
  });

  it('with an empty allow-list reaches nothing, and a proxy-aware client is refused with a logged decision', async () => {
    const script = `
const net = require('node:net');
const proxy = new URL(process.env.HTTPS_PROXY);
const s = net.connect(Number(proxy.port), proxy.hostname);
let d = ''; s.on('data', (c) => d += c); s.on('close', () => console.log(d.split('\\r\\n')[0]));
s.write('CONNECT 127.0.0.1:${port} HTTP/1.1\\r\\n\\r\\n');
`;
    const result = await runSandboxed(script, [], state);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'HTTP/1.1 403 Forbidden');
    assert.deepEqual(result.decisions.map((d) => [d.host, d.port, d.allowed]), [['127.0.0.1', port, false]]);
  });
});
