/**
 * Egress limited to an allow-list, enforced outside the sandbox: a real proxy on a Unix socket,
 * a real TCP server on the host, and a real bubblewrap sandbox with no network of its own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { egressAllowed, parseConnectLine, startEgressProxy, type EgressDecision } from './egress-proxy.ts';
import { runOneShot } from './one-shot.ts';
import { detectHost } from './host-detection.ts';
import { skipUnless } from '../../test/helpers/requirements.ts';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** Sends a CONNECT through the proxy socket and returns the status line and what the tunnel answered. */
function tunnel(socketPath: string, target: string): Promise<{ status: string; reply: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n\r\n') && data.startsWith('HTTP/1.1 200')) socket.write('ping\n');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: data.split('\r\n')[0] ?? '', reply: data.split('\r\n\r\n')[1] ?? '' }));
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

describe('egress proxy', () => {
  let echo: Server;
  let port: number;
  before(async () => {
    echo = createServer((socket) => socket.once('data', (chunk) => socket.end(`echo:${chunk.toString().trim()}`)));
    port = await listen(echo);
  });
  after(() => echo.close());

  it('parses CONNECT lines and nothing else', () => {
    assert.deepEqual(parseConnectLine('CONNECT registry.npmjs.org:443 HTTP/1.1'), { host: 'registry.npmjs.org', port: 443 });
    assert.deepEqual(parseConnectLine('CONNECT [::1]:5432 HTTP/1.1'), { host: '::1', port: 5432 });
    for (const line of ['GET http://x/ HTTP/1.1', 'CONNECT x:0 HTTP/1.1', 'CONNECT x:99999 HTTP/1.1', 'CONNECT a b:1 HTTP/1.1', 'CONNECT x:1']) {
      assert.equal(parseConnectLine(line), undefined, line);
    }
    assert.ok(egressAllowed([{ host: 'Registry.NPMJS.org', port: 443 }], { host: 'registry.npmjs.org', port: 443 }));
    assert.ok(!egressAllowed([{ host: 'registry.npmjs.org', port: 443 }], { host: 'registry.npmjs.org', port: 80 }));
  });

  it('tunnels to allowed destinations, refuses others, and records both', async () => {
    const decisions: EgressDecision[] = [];
    const proxy = await startEgressProxy({ label: 'test', allow: [{ host: '127.0.0.1', port }], onDecision: (d) => decisions.push(d) });
    try {
      const allowed = await tunnel(proxy.socketPath, `127.0.0.1:${port}`);
      assert.equal(allowed.status, 'HTTP/1.1 200 Connection Established');
      assert.equal(allowed.reply, 'echo:ping');
      const denied = await tunnel(proxy.socketPath, `127.0.0.1:${port + 1}`);
      assert.match(denied.status, /^HTTP\/1\.1 403/);
      assert.match(denied.reply, /not allowed for test/);
      const notConnect = await tunnel(proxy.socketPath, 'x').catch(() => ({ status: '', reply: '' }));
      assert.match(notConnect.status, /^HTTP\/1\.1 405/);
      assert.deepEqual(decisions.map((d) => [d.port, d.allowed]), [[port, true], [port + 1, false]]);
    } finally {
      await proxy.close();
    }
  });
});

const host = detectHost();

describe('a sandboxed one-shot command reaches only its allow-list', { skip: skipUnless(!host.bubblewrap && `bubblewrap is unusable: ${host.bubblewrapProblem}`) }, () => {
  let echo: Server;
  let port: number;
  let work: string;
  before(async () => {
    echo = createServer((socket) => socket.once('data', (chunk) => socket.end(`echo:${chunk.toString().trim()}`)));
    port = await listen(echo);
    work = mkdtempSync(join(tmpdir(), 'quiver-egress-work-'));
    chmodSync(work, 0o755);
  });
  after(() => {
    echo.close();
    rmSync(work, { recursive: true, force: true });
  });

  // Inside the sandbox: a direct connection, then CONNECTs through the bridge's proxy variable.
  const client = (target: number, denied: number) => `
const net = require('node:net');
const direct = () => new Promise((resolve) => { const s = net.connect(${target}, '127.0.0.1'); s.on('connect', () => { s.destroy(); resolve('direct:open'); }); s.on('error', (e) => resolve('direct:' + e.code)); });
const via = (port) => new Promise((resolve) => {
  const proxy = new URL(process.env.HTTPS_PROXY);
  const s = net.connect(Number(proxy.port), proxy.hostname);
  let data = '';
  s.on('data', (c) => { data += c; if (data.startsWith('HTTP/1.1 200') && data.includes('\\r\\n\\r\\n') && !s.sent) { s.sent = true; s.write('hi\\n'); } });
  s.on('close', () => resolve(data.split('\\r\\n')[0] + '|' + (data.split('\\r\\n\\r\\n')[1] || '').trim()));
  s.write('CONNECT 127.0.0.1:' + port + ' HTTP/1.1\\r\\n\\r\\n');
});
(async () => { console.log(await direct()); console.log(await via(${target})); console.log(await via(${denied})); })();
`;

  it('has no network of its own; the allowed host answers through the proxy, another is refused', async () => {
    const decisions: EgressDecision[] = [];
    const result = await runOneShot(
      {
        label: 'egress-probe',
        command: process.execPath,
        args: ['-e', client(port, port + 1)],
        workDir: work,
        timeoutMs: 30_000,
        egress: [{ host: '127.0.0.1', port }],
        onEgress: (decision) => decisions.push(decision),
      },
      { host, dangerouslyAllowUnsandboxed: false },
    );
    assert.equal(result.exitCode, 0, result.outputTail);
    const lines = result.outputTail.split('\n');
    assert.equal(lines[0], 'direct:ECONNREFUSED', 'the sandbox loopback is its own');
    assert.equal(lines[1], 'HTTP/1.1 200 Connection Established|echo:hi');
    assert.match(lines[2] ?? '', /^HTTP\/1\.1 403 Forbidden\|egress to 127\.0\.0\.1:\d+ is not allowed for egress-probe/);
    assert.deepEqual(decisions.map((d) => d.allowed), [true, false]);
  });
});
