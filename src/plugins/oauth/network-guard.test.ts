/**
 * The SSRF guard on remote plugins' MCP URLs and their OAuth requests (issue #27): which addresses
 * are refused, the admin's setting, https for OAuth, redirects re-checked, and the address checked
 * again on the connection (a rebinding resolver). Real
 * HTTP servers on loopback; the refused targets (169.254.169.254, 10.0.0.1) are never reached
 * because the guard refuses before connecting.
 */
import { it, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addressRefusal, checkOAuthUrl, checkRemotePluginUrl, createGuardedFetch, createRemotePluginFetch, parseOAuthNetworkPolicy, type Resolver } from './network-guard.ts';

const none = parseOAuthNetworkPolicy(undefined);
const withLoopback = parseOAuthNetworkPolicy('loopback');

describe('remote OAuth network guard', () => {
  let server: Server;
  let base = '';
  const hits: string[] = [];

  before(async () => {
    server = createServer((request, response) => {
      hits.push(request.url ?? '');
      const target = new URL(request.url ?? '/', base);
      if (target.pathname === '/to-metadata') return void response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (target.pathname === '/to-private') return void response.writeHead(307, { location: 'https://10.0.0.1/token' }).end();
      if (target.pathname === '/to-self') return void response.writeHead(303, { location: '/ok' }).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: target.pathname, method: request.method }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  it('refuses loopback, link-local (cloud metadata), private and reserved addresses unless admitted', () => {
    for (const address of ['127.0.0.1', '::1', '169.254.169.254', 'fd00:ec2::254', '10.1.2.3', '172.20.0.1', '192.168.1.1', '100.100.100.200', '0.0.0.0', '::ffff:127.0.0.1', '::ffff:169.254.169.254', 'fe80::1']) {
      assert.ok(addressRefusal(address, none) !== undefined, `${address} refused by default`);
    }
    assert.match(addressRefusal('169.254.169.254', none)!, /link-local \(cloud metadata\)/);
    assert.match(addressRefusal('127.0.0.1', none)!, /loopback.*QUIVER_REMOTE_ALLOW_ADDRESSES/);
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.equal(addressRefusal(address, none), undefined, `${address} is public`);
    assert.equal(addressRefusal('127.0.0.1', withLoopback), undefined);
    assert.equal(addressRefusal('::ffff:127.0.0.1', withLoopback), undefined);
    assert.ok(addressRefusal('169.254.169.254', withLoopback), 'admitting loopback admits nothing else');
    const cidr = parseOAuthNetworkPolicy(' 10.1.0.0/16, fd00::/8 ');
    assert.equal(addressRefusal('10.1.9.9', cidr), undefined);
    assert.ok(addressRefusal('10.2.0.1', cidr));
    assert.equal(addressRefusal('fd00:ec2::254', cidr), undefined);
    assert.equal(cidr.loopbackAdmitted, false);
    assert.equal(parseOAuthNetworkPolicy('127.0.0.1').loopbackAdmitted, true);
    assert.throws(() => parseOAuthNetworkPolicy('loopback,everything'), /'everything' is not loopback, private, link-local/);
    assert.throws(() => parseOAuthNetworkPolicy('10.0.0.0/33'), /not loopback/);
  });

  it('requires https except to an admitted loopback address; refuses other schemes and unresolvable hosts', async () => {
    await assert.rejects(checkOAuthUrl(new URL('http://8.8.8.8/token'), none), /https is required/);
    await assert.rejects(checkOAuthUrl(new URL('http://127.0.0.1/token'), none), /127\.0\.0\.1 is a loopback address/);
    await checkOAuthUrl(new URL('http://127.0.0.1/token'), withLoopback);
    await checkOAuthUrl(new URL('http://localhost/token'), withLoopback);
    await assert.rejects(checkOAuthUrl(new URL('http://10.0.0.1/token'), parseOAuthNetworkPolicy('private')), /https is required/);
    await checkOAuthUrl(new URL('https://10.0.0.1/token'), parseOAuthNetworkPolicy('private'));
    await assert.rejects(checkOAuthUrl(new URL('https://[::ffff:a9fe:a9fe]/'), none), /169\.254\.169\.254 is a link-local/);
    await assert.rejects(checkOAuthUrl(new URL('file:///etc/passwd'), withLoopback), /file: is not https/);
    await assert.rejects(checkOAuthUrl(new URL('https://does-not-exist.invalid/'), none), /does not resolve/);
  });

  it('fetches through the guard: refused before connecting, admitted loopback served, redirects re-checked, the plugin origin trusted', async () => {
    const plugin = 'https://mcp.example.com/mcp';
    const guarded = createGuardedFetch(none)(plugin);
    const admitted = createGuardedFetch(withLoopback)(plugin);
    const before = hits.length;
    await assert.rejects(guarded(`${base}/ok`), /refused the OAuth request to http:\/\/127\.0\.0\.1:\d+\/ok: 127\.0\.0\.1 is a loopback address/);
    assert.equal(hits.length, before, 'nothing reached the refused server');
    assert.deepEqual(await (await admitted(`${base}/ok`)).json(), { path: '/ok', method: 'GET' });
    // A 303 after a POST continues as a GET at the same (checked) server.
    assert.deepEqual(await (await admitted(`${base}/to-self`, { method: 'POST', body: 'a=b' })).json(), { path: '/ok', method: 'GET' });
    await assert.rejects(admitted(`${base}/to-metadata`), /169\.254\.169\.254 is a link-local \(cloud metadata\) address/);
    await assert.rejects(admitted(`${base}/to-private`), /10\.0\.0\.1 is a private or reserved address/);
    // A caller that follows redirects itself gets the redirect (its next request is checked again).
    assert.equal((await admitted(`${base}/to-metadata`, { redirect: 'manual' })).status, 302);
    // The plugin's own origin keeps the admin's scheme, but its address is checked like the others (DNS rebinding).
    const before2 = hits.length;
    await assert.rejects(createGuardedFetch(none)(`${base}/mcp`)(`${base}/ok`), /refused to connect to the remote plugin at http:\/\/127\.0\.0\.1:\d+\/ok: 127\.0\.0\.1 is a loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/);
    assert.equal(hits.length, before2, 'nothing reached the refused plugin origin');
    const own = createGuardedFetch(withLoopback)(`${base}/mcp`);
    assert.deepEqual(await (await own(`${base}/ok`)).json(), { path: '/ok', method: 'GET' });
    await assert.rejects(own(`${base}/to-metadata`), /169\.254\.169\.254/, 'a redirect out of the plugin origin is checked');
  });

  it("guards a remote plugin's own MCP URL: refused before connecting, admitted loopback served, redirects re-checked", async () => {
    await assert.rejects(checkRemotePluginUrl(new URL(`${base}/mcp`), none), /refused to connect to the remote plugin at http:\/\/127\.0\.0\.1:\d+\/mcp: 127\.0\.0\.1 is a loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/);
    await assert.rejects(checkRemotePluginUrl(new URL('https://169.254.169.254/mcp'), withLoopback), /link-local \(cloud metadata\)/);
    await assert.rejects(checkRemotePluginUrl(new URL('https://[::ffff:10.0.0.1]/mcp'), withLoopback), /10\.0\.0\.1 is a private or reserved address/);
    // Plain http is the admin's choice for the plugin itself (no https rule), its address still checked.
    await checkRemotePluginUrl(new URL(`${base}/mcp`), withLoopback);
    await checkRemotePluginUrl(new URL('http://8.8.8.8/mcp'), none);
    const before = hits.length;
    await assert.rejects(createRemotePluginFetch(none)(`${base}/ok`), /refused to connect to the remote plugin/);
    assert.equal(hits.length, before, 'nothing reached the refused server');
    const admitted = createRemotePluginFetch(withLoopback);
    assert.deepEqual(await (await admitted(`${base}/ok`, { method: 'POST', body: '{}' })).json(), { path: '/ok', method: 'POST' });
    await assert.rejects(admitted(`${base}/to-metadata`), /refused to connect to the remote plugin at http:\/\/169\.254\.169\.254\/latest\/meta-data\/: 169\.254\.169\.254 is a link-local/);
  });

  it('checks the address again on the connection: a host name re-resolving to loopback (DNS rebinding) is refused', async () => {
    const port = new URL(base).port;
    // The first answer (the check before the request) is public; the connection's own lookup gets loopback.
    let answers = 0;
    const rebinding: Resolver = async () => (answers++ === 0 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const before = hits.length;
    await assert.rejects(createRemotePluginFetch(none, { resolver: rebinding })(`http://rebind.quiver.test:${port}/ok`), /refused to connect to the remote plugin at http:\/\/rebind\.quiver\.test:\d+\/ok: 127\.0\.0\.1 is a loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/);
    assert.ok(answers >= 2, 'the connection looked the name up again');
    assert.equal(hits.length, before, 'nothing reached the server the name re-bound to');
    answers = 0;
    await assert.rejects(createGuardedFetch(withLoopback, { resolver: async () => (answers++ === 0 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '169.254.169.254', family: 4 }]) })('https://mcp.example.com/mcp')(`https://as.quiver.test:${port}/token`), /refused the OAuth request to https:\/\/as\.quiver\.test:\d+\/token: 169\.254\.169\.254 is a link-local/);
    // The same resolver answering loopback both times reaches the server when loopback is admitted: the connection uses the checked lookup.
    const loopbackOnly: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    assert.deepEqual(await (await createRemotePluginFetch(withLoopback, { resolver: loopbackOnly })(`http://rebind.quiver.test:${port}/ok`)).json(), { path: '/ok', method: 'GET' });
  });
});
