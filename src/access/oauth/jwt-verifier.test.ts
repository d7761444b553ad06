/**
 * Access-token validation (issue #27) against an issuer served over real HTTP on loopback: its
 * metadata and JWKS are discovered, and a token is refused for another audience, another issuer,
 * after expiry, with an unknown key, with HS256, and when the metadata names another issuer.
 * Claims map onto a principal without ever widening what the admitted organisation allows.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import { createJwtVerifier } from './jwt-verifier.ts';
import { principalFromClaims, type ClaimMapping } from './token-principal.ts';
import { metadataUrlFor, resourceFor } from './protected-resource.ts';
import { isQuiverError } from '../../core/errors.ts';

const AUDIENCE = 'http://127.0.0.1:7411/mcp';

interface Issuer {
  url: string;
  privateKey: CryptoKey;
  metadataIssuer: string;
  close(): Promise<void>;
}

async function startIssuer(): Promise<Issuer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const state = { metadataIssuer: '' };
  const server: Server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.url === '/.well-known/openid-configuration') response.end(JSON.stringify({ issuer: state.metadataIssuer, jwks_uri: `${url}/jwks` }));
    else if (request.url === '/jwks') response.end(JSON.stringify({ keys: [jwk] }));
    else response.writeHead(404).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.metadataIssuer = url;
  return {
    url,
    privateKey,
    get metadataIssuer() {
      return state.metadataIssuer;
    },
    set metadataIssuer(value: string) {
      state.metadataIssuer = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function sign(issuer: Issuer, claims: Record<string, unknown>, options: { audience?: string; issuer?: string; expiresAt?: number; kid?: string; key?: CryptoKey } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1', typ: 'at+jwt' })
    .setIssuer(options.issuer ?? issuer.url)
    .setAudience(options.audience ?? AUDIENCE)
    .setSubject('alice')
    .setIssuedAt(now - 60)
    .setExpirationTime(options.expiresAt ?? now + 300)
    .sign(options.key ?? issuer.privateKey);
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isQuiverError(error), `unexpected ${String(error)}`);
    return `${error.code}: ${error.message}`;
  }
  assert.fail('the token was accepted');
}

describe('access token verification', () => {
  let issuer: Issuer;
  before(async () => {
    issuer = await startIssuer();
  });
  after(() => issuer.close());

  it('accepts a token of the issuer for this resource and refuses every other', async () => {
    const verifier = createJwtVerifier({ issuer: issuer.url, clockToleranceSeconds: 0 });
    const claims = await verifier.verify(await sign(issuer, { scope: 'mcp', org: 'acme' }), AUDIENCE);
    assert.equal(claims.sub, 'alice');
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { audience: 'http://other.example/mcp' }), AUDIENCE)), /^unauthorized: .*audience/);
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { issuer: 'http://evil.example' }), AUDIENCE)), /^unauthorized: .*issued by/);
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { expiresAt: Math.floor(Date.now() / 1000) - 10 }), AUDIENCE)), /^unauthorized: .*expired/);
    const stranger = await generateKeyPair('ES256');
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { key: stranger.privateKey }), AUDIENCE)), /^unauthorized: .*invalid/);
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { key: stranger.privateKey, kid: 'k2' }), AUDIENCE)), /^unauthorized: .*invalid/);
    const hs256 = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer(issuer.url).setAudience(AUDIENCE).setSubject('alice').setExpirationTime('5m').sign(new TextEncoder().encode('x'.repeat(32)));
    assert.match(await refusal(verifier.verify(hs256, AUDIENCE)), /^unauthorized: .*algorithm/);
    assert.match(await refusal(verifier.verify('qvr_not-a-jwt', AUDIENCE)), /^unauthorized: .*not a JWT/);
  });

  it('refuses metadata that names another issuer, and tries discovery again afterwards', async () => {
    const verifier = createJwtVerifier({ issuer: issuer.url });
    issuer.metadataIssuer = 'http://evil.example';
    try {
      assert.match(await refusal(verifier.verify(await sign(issuer, {}), AUDIENCE)), /^unavailable: .*names issuer/);
    } finally {
      issuer.metadataIssuer = issuer.url;
    }
    assert.equal((await verifier.verify(await sign(issuer, {}), AUDIENCE)).sub, 'alice');
  });

  it('an unreachable issuer is unavailable, not a bad token', async () => {
    const verifier = createJwtVerifier({ issuer: 'http://127.0.0.1:9' });
    assert.match(await refusal(verifier.verify(await sign(issuer, {}, { issuer: 'http://127.0.0.1:9' }), AUDIENCE)), /^unavailable: /);
  });
});

describe('token claims to principal', () => {
  const mapping: ClaimMapping = {
    orgClaim: 'org',
    userClaim: 'sub',
    rolesClaim: 'realm.roles',
    organisations: { acme: { org: 'acme-corp', scopes: ['mcp', 'read'], roles: ['dev', 'ops'] } },
  };

  it('keeps only the scopes and roles the organisation grants (never admin)', () => {
    const principal = principalFromClaims({ sub: 'alice', org: 'acme', scope: 'mcp admin select', realm: { roles: ['dev', 'root'] } }, mapping);
    assert.deepEqual(
      { scopes: principal.scopes, roles: principal.roles, orgId: principal.orgId, userId: principal.userId, keyId: principal.keyId },
      { scopes: ['mcp'], roles: ['dev'], orgId: 'acme-corp', userId: 'alice', keyId: 'token:alice' },
    );
    assert.deepEqual(principalFromClaims({ sub: 'bob', org: 'acme', scp: ['read', 'mcp'] }, mapping).scopes, ['read', 'mcp']);
  });

  it('refuses an organisation that is not admitted, none at all, or several', () => {
    for (const claims of [{ sub: 'eve', org: 'globex', scope: 'mcp' }, { sub: 'eve', scope: 'mcp' }, { sub: 'eve', org: ['acme', 'globex'], scope: 'mcp' }]) {
      assert.throws(() => principalFromClaims(claims, mapping), (error: unknown) => isQuiverError(error, 'forbidden'));
    }
    const anyOrg: ClaimMapping = { ...mapping, organisations: { '*': { scopes: ['mcp'], roles: [] } } };
    assert.equal(principalFromClaims({ sub: 'eve', org: 'globex', scope: 'mcp' }, anyOrg).orgId, 'globex');
    assert.equal(principalFromClaims({ sub: 'eve', scope: 'mcp' }, anyOrg).orgId, null);
  });
});

describe('protected resource identifier', () => {
  it('is configured, or derived only for an allowed host; its metadata URL inserts the well-known prefix', () => {
    const settings = { issuer: 'http://as', scopesSupported: ['mcp'] };
    assert.equal(resourceFor(new Request('http://127.0.0.1:8080/mcp'), settings, ['127.0.0.1']), 'http://127.0.0.1:8080/mcp');
    assert.equal(resourceFor(new Request('http://[::1]:8080/mcp'), settings, ['::1']), 'http://[::1]:8080/mcp');
    assert.equal(resourceFor(new Request('http://attacker.example/mcp'), settings, ['127.0.0.1']), undefined);
    assert.equal(resourceFor(new Request('http://attacker.example/mcp'), { ...settings, resource: 'https://q.example/mcp' }, []), 'https://q.example/mcp');
    assert.equal(metadataUrlFor('https://q.example/mcp'), 'https://q.example/.well-known/oauth-protected-resource/mcp');
    assert.equal(metadataUrlFor('https://q.example/'), 'https://q.example/.well-known/oauth-protected-resource');
  });
});
