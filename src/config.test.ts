import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from './config.ts';
import { isQuiverError } from './core/errors.ts';

describe('loadConfig: MCP gateway limits (issue #18)', () => {
  test('defaults: 1,000 sessions, 100 per key, 250 per organisation, 5 minutes idle, bounded searches', () => {
    assert.deepEqual(loadConfig({ HOME: '/tmp' }).mcp, {
      maxSessions: 1000,
      maxSessionsPerKey: 100,
      maxSessionsPerOrg: 250,
      sessionIdleTtlMs: 300_000,
      maxConcurrentSearches: 64,
      maxQueuedSearches: 1024,
      maxWaitMs: 5000,
      sessionStore: 'database',
    });
  });

  test('QUIVER_MCP_* variables set them', () => {
    const config = loadConfig({
      HOME: '/tmp',
      QUIVER_MCP_MAX_SESSIONS: '20',
      QUIVER_MCP_MAX_SESSIONS_PER_KEY: '3',
      QUIVER_MCP_MAX_SESSIONS_PER_ORG: '7',
      QUIVER_MCP_SESSION_IDLE_SECONDS: '60',
      QUIVER_MCP_MAX_CONCURRENT_SEARCHES: '8',
      QUIVER_MCP_MAX_QUEUED_SEARCHES: '0',
      QUIVER_MCP_MAX_WAIT_MS: '250',
      QUIVER_MCP_SESSIONS: 'memory',
    });
    assert.deepEqual(config.mcp, {
      maxSessions: 20,
      maxSessionsPerKey: 3,
      maxSessionsPerOrg: 7,
      sessionIdleTtlMs: 60_000,
      maxConcurrentSearches: 8,
      maxQueuedSearches: 0,
      maxWaitMs: 250,
      sessionStore: 'memory',
    });
    assert.ok(Object.isFrozen(config.mcp));
  });

  test('invalid values fail fast, naming the variable', () => {
    for (const [name, value] of [
      ['QUIVER_MCP_MAX_SESSIONS', '0'],
      ['QUIVER_MCP_MAX_SESSIONS_PER_KEY', 'many'],
      ['QUIVER_MCP_SESSION_IDLE_SECONDS', '1.5'],
      ['QUIVER_MCP_MAX_CONCURRENT_SEARCHES', '-1'],
    ] as const) {
      assert.throws(() => loadConfig({ HOME: '/tmp', [name]: value }), (error) => isQuiverError(error, 'invalid_config') && error.message.includes(name), name);
    }
  });
});

describe('timing settings and the command environment', () => {
  test('defaults, overrides, and a frozen copy of the environment for install commands', () => {
    const defaults = loadConfig({ HOME: '/tmp' });
    assert.deepEqual(defaults.timing, {
      pluginPoolSize: 1,
      pluginPingIntervalMs: 60_000,
      callEventRetentionDays: 30,
      apiKeyCacheMs: 30_000,
      discoveryTimeoutMs: 30_000,
      gitTimeoutMs: 120_000,
      npmTimeoutMs: 300_000,
      buildTimeoutMs: 300_000,
    });
    const tuned = loadConfig({ HOME: '/tmp', QUIVER_PLUGIN_POOL_SIZE: '4', QUIVER_PLUGIN_PING_INTERVAL_MS: '0', QUIVER_CALL_EVENTS_RETENTION_DAYS: '7', QUIVER_BUILD_TIMEOUT_MS: '600000', HTTPS_PROXY: 'http://proxy:3128' });
    assert.equal(tuned.timing.pluginPoolSize, 4);
    assert.equal(tuned.timing.pluginPingIntervalMs, 0);
    assert.equal(tuned.timing.callEventRetentionDays, 7);
    assert.equal(tuned.timing.buildTimeoutMs, 600_000);
    assert.equal(tuned.commandEnv.HTTPS_PROXY, 'http://proxy:3128');
    assert.ok(Object.isFrozen(tuned.commandEnv));
    for (const [name, value] of [['QUIVER_GIT_TIMEOUT_MS', '10'], ['QUIVER_CALL_EVENTS_RETENTION_DAYS', '-1'], ['QUIVER_API_KEY_CACHE_MS', 'soon'], ['QUIVER_PLUGIN_POOL_SIZE', '9']] as const) {
      assert.throws(() => loadConfig({ HOME: '/tmp', [name]: value }), (error) => isQuiverError(error, 'invalid_config') && error.message.includes(name), name);
    }
  });
});

describe('OAuth resource-server settings (issue #27)', () => {
  test('address lists (QUIVER_TRUST_PROXY, QUIVER_REMOTE_ALLOW_ADDRESSES and its older name) are checked at load and merged', () => {
    assert.throws(() => loadConfig({ HOME: '/tmp', QUIVER_TRUST_PROXY: 'loopback,proxy.example' }), /QUIVER_TRUST_PROXY: 'proxy\.example' is not loopback/);
    assert.throws(() => loadConfig({ HOME: '/tmp', QUIVER_REMOTE_ALLOW_ADDRESSES: '10.0.0.0/40' }), /QUIVER_REMOTE_ALLOW_ADDRESSES: '10\.0\.0\.0\/40'/);
    const config = loadConfig({ HOME: '/tmp', QUIVER_TRUST_PROXY: 'loopback', QUIVER_REMOTE_ALLOW_ADDRESSES: 'loopback', QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: '10.1.0.0/16' });
    assert.equal(config.trustProxy, 'loopback');
    assert.equal(config.remoteOAuth?.allowAddresses, 'loopback,10.1.0.0/16');
    assert.equal(loadConfig({ HOME: '/tmp' }).remoteOAuth?.allowAddresses, undefined);
  });
  test('off without an issuer; with one, the admitted organisations are required and parsed', () => {
    assert.equal(loadConfig({ HOME: '/tmp' }).oauth, undefined);
    const oauth = loadConfig({
      HOME: '/tmp',
      QUIVER_OAUTH_ISSUER: 'https://id.example',
      QUIVER_OAUTH_ORGS: '{"acme":{"org":"acme","scopes":["mcp","read"],"roles":["dev"]}}',
      QUIVER_OAUTH_ROLES_CLAIM: 'realm_access.roles',
    }).oauth;
    assert.deepEqual(
      { issuer: oauth?.issuer, scopes: oauth?.scopesSupported, roles: oauth?.rolesClaim, orgClaim: oauth?.orgClaim, acme: oauth?.organisations.acme },
      { issuer: 'https://id.example', scopes: ['mcp'], roles: 'realm_access.roles', orgClaim: 'org', acme: { org: 'acme', scopes: ['mcp', 'read'], roles: ['dev'] } },
    );
  });

  test('fails fast on a missing or bad organisation map, admin scope, or settings without an issuer', () => {
    const base = { HOME: '/tmp', QUIVER_OAUTH_ISSUER: 'https://id.example' };
    for (const [env, text] of [
      [base, 'needs QUIVER_OAUTH_ORGS'],
      [{ ...base, QUIVER_OAUTH_ORGS: 'acme' }, 'not valid JSON'],
      [{ ...base, QUIVER_OAUTH_ORGS: '{}' }, 'admits no organisation'],
      [{ ...base, QUIVER_OAUTH_ORGS: '{"acme":{"scopes":["admin"]}}' }, 'QUIVER_OAUTH_ORGS'],
      [{ ...base, QUIVER_OAUTH_ORGS: '{"acme":{"role":"x"}}' }, 'QUIVER_OAUTH_ORGS'],
      [{ HOME: '/tmp', QUIVER_OAUTH_ORGS: '{"acme":{}}' }, 'need QUIVER_OAUTH_ISSUER'],
    ] as const) {
      assert.throws(() => loadConfig(env), (error) => isQuiverError(error, 'invalid_config') && error.message.includes(text), text);
    }
  });
});
