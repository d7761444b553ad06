import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SessionIdentity } from './backend.ts';
import { DEFAULT_ADMISSION, DEFAULT_SESSION_LIMITS, resolveGatewaySettings } from './gateway-settings.ts';
import { DEFAULT_GUARD_OPTIONS } from './iteration-guard.ts';

const identity = (extra: Partial<SessionIdentity> = {}) => ({ workspace: 'w', project: null, orgId: null, userId: null, roles: [], tier: null, ...extra }) as SessionIdentity;

describe('resolveGatewaySettings', () => {
  test('no options give the documented defaults', () => {
    const settings = resolveGatewaySettings();
    assert.equal(settings.capacity, 16);
    assert.equal(settings.ttlMs, 30 * 60_000);
    assert.equal(settings.defaultLimit, 5);
    assert.equal(settings.maxLimit, 20);
    assert.deepEqual(settings.admission, DEFAULT_ADMISSION);
    assert.deepEqual(settings.guardOptions, DEFAULT_GUARD_OPTIONS);
    assert.deepEqual(settings.sessions, { ...DEFAULT_SESSION_LIMITS, sweepIntervalMs: 60_000 });
    assert.equal(settings.modeFor(identity()), 'search');
  });

  test('the sweep runs at a fifth of a short idle TTL, never under a second, and 0 turns it off', () => {
    assert.equal(resolveGatewaySettings({ sessions: { idleTtlMs: 10_000 } }).sessions.sweepIntervalMs, 2_000);
    assert.equal(resolveGatewaySettings({ sessions: { idleTtlMs: 100 } }).sessions.sweepIntervalMs, 1_000);
    assert.equal(resolveGatewaySettings({ sessions: { sweepIntervalMs: 0 } }).sessions.sweepIntervalMs, 0);
  });

  test('guard guidance is kept apart from the guard thresholds; partial options merge over defaults', () => {
    const settings = resolveGatewaySettings({ guard: { guidance: { 'a.b': 'use c' } }, admission: { maxConcurrent: 2 } });
    assert.deepEqual(settings.specificGuidance, { 'a.b': 'use c' });
    assert.equal('guidance' in settings.guardOptions, false);
    assert.deepEqual(settings.admission, { ...DEFAULT_ADMISSION, maxConcurrent: 2 });
  });

  test('the exposure mode: the connection first, then the workspace, then the default', () => {
    const settings = resolveGatewaySettings({ defaultExposureMode: 'all', exposureModeFor: (who) => (who.workspace === 'docs' ? 'capabilities' : undefined) });
    assert.equal(settings.modeFor(identity({ workspace: 'docs', exposureMode: 'search' })), 'search');
    assert.equal(settings.modeFor(identity({ workspace: 'docs' })), 'capabilities');
    assert.equal(settings.modeFor(identity()), 'all');
  });
});
