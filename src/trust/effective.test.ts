import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveTrust, rankingFactor, trustRankingFactor } from './effective.ts';
import { runtimeTrustScore } from './dynamic.ts';
import { parseEgressTarget } from './egress-target.ts';

describe('effective trust (verdict → grant or cap → dynamic trust)', () => {
  it('starts from the verdict, or the default before any', () => {
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED' }).level, 'COMMUNITY');
    assert.deepEqual(effectiveTrust({ verifiedLevel: null, defaultLevel: 'UNVERIFIED' }), { level: 'UNVERIFIED', steps: ['not verified: default UNVERIFIED'] });
  });

  it('nothing automatic goes above COMMUNITY: a stored verdict or a default above it is lowered (issue #23)', () => {
    const stored = effectiveTrust({ verifiedLevel: 'OFFICIAL', defaultLevel: 'UNVERIFIED' });
    assert.deepEqual(stored, { level: 'COMMUNITY', steps: ['verified: OFFICIAL', 'automatic trust stops at COMMUNITY'] });
    assert.equal(effectiveTrust({ verifiedLevel: null, defaultLevel: 'ENTERPRISE' }).level, 'COMMUNITY');
  });

  it('a grant above COMMUNITY holds only on a pinned source (issue #23)', () => {
    const pinned = { pinned: true, description: 'git commit 0123456789ab' };
    const folder = { pinned: false, description: 'local folder /srv/x (not pinned: it can change under the grant)' };
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'OFFICIAL' }, source: pinned }).level, 'OFFICIAL');
    const refused = effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'OFFICIAL' }, source: folder });
    assert.equal(refused.level, 'COMMUNITY');
    assert.match(refused.steps.at(-1)!, /admin grant OFFICIAL not applied: local folder \/srv\/x/);
    assert.equal(effectiveTrust({ verifiedLevel: 'UNVERIFIED', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'ENTERPRISE' } }).level, 'COMMUNITY', 'no source known: not pinned');
  });

  it('a grant sets the level, up or down; a cap only ever lowers it', () => {
    const pinned = { pinned: true, description: 'git commit 0123456789ab' };
    assert.equal(effectiveTrust({ verifiedLevel: 'UNVERIFIED', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'COMMUNITY' } }).level, 'COMMUNITY');
    assert.equal(effectiveTrust({ verifiedLevel: 'OFFICIAL', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'UNVERIFIED' } }).level, 'UNVERIFIED');
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'OFFICIAL' }, source: pinned, runtime: undefined }).level, 'OFFICIAL');
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'cap', level: 'UNVERIFIED' } }).level, 'UNVERIFIED');
    const capAbove = effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'cap', level: 'OFFICIAL' } });
    assert.equal(capAbove.level, 'COMMUNITY');
    assert.match(capAbove.steps[1]!, /no change/);
  });

  it('runtime trust below the threshold lowers one level, granted or not, never below UNVERIFIED, and never raises', () => {
    const below = { score: 20, belowThreshold: true };
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'ENTERPRISE' }, source: { pinned: true, description: 'x' }, runtime: below }).level, 'COMMUNITY');
    assert.equal(effectiveTrust({ verifiedLevel: 'UNVERIFIED', defaultLevel: 'UNVERIFIED', grant: { kind: 'grant', level: 'COMMUNITY' }, runtime: below }).level, 'UNVERIFIED');
    assert.equal(effectiveTrust({ verifiedLevel: 'UNVERIFIED', defaultLevel: 'UNVERIFIED', runtime: below }).level, 'UNVERIFIED');
    assert.equal(effectiveTrust({ verifiedLevel: 'COMMUNITY', defaultLevel: 'UNVERIFIED', runtime: { score: 99, belowThreshold: false } }).level, 'COMMUNITY');
  });

  it('ranking factor is 1 from the full level up, lower below it and lower again below the runtime threshold, never above 1', () => {
    const settings = { fullFrom: 'COMMUNITY' as const, step: 0.15, runtimePenalty: 0.3 };
    assert.equal(rankingFactor('OFFICIAL', false, settings), 1);
    assert.equal(rankingFactor('COMMUNITY', false, settings), 1);
    assert.equal(rankingFactor('UNVERIFIED', false, settings), 0.85);
    assert.ok(Math.abs(rankingFactor('COMMUNITY', true, settings) - 0.7) < 1e-9);
    assert.ok(rankingFactor('UNVERIFIED', true, settings) < rankingFactor('UNVERIFIED', false, settings));
  });

  it('does not penalise a plugin nobody has judged yet, but does one verified or capped low, and one misbehaving at runtime', () => {
    const settings = { fullFrom: 'COMMUNITY' as const, step: 0.15, runtimePenalty: 0.3 };
    assert.equal(trustRankingFactor({ verifiedLevel: null, defaultLevel: 'UNVERIFIED' }, settings), 1);
    assert.equal(trustRankingFactor({ verifiedLevel: 'UNVERIFIED', defaultLevel: 'UNVERIFIED' }, settings), 0.85);
    assert.equal(trustRankingFactor({ verifiedLevel: 'OFFICIAL', defaultLevel: 'UNVERIFIED', grant: { kind: 'cap', level: 'UNVERIFIED' } }, settings), 0.85);
    assert.ok(Math.abs(trustRankingFactor({ verifiedLevel: null, defaultLevel: 'UNVERIFIED', runtime: { score: 10, belowThreshold: true } }, settings) - 0.7) < 1e-9);
  });
});

describe('runtime trust score (seed 000 §4.3)', () => {
  const quiet = { calls: 0, failures: 0, meanLatencyMs: 0, stddevLatencyMs: 0, deniedEgress: 0, userReports: 0 };
  it('is 100 for a plugin that behaves and ignores error rate below the minimum of calls', () => {
    assert.equal(runtimeTrustScore({ ...quiet, calls: 50, meanLatencyMs: 20, stddevLatencyMs: 5 }, 10).score, 100);
    assert.equal(runtimeTrustScore({ ...quiet, calls: 3, failures: 3 }, 10).score, 100);
    assert.equal(runtimeTrustScore({ ...quiet, calls: 3, failures: 3 }, 10).factors.failureRate, null);
  });
  it('falls with failures, erratic latency, denied egress and user reports', () => {
    assert.equal(runtimeTrustScore({ ...quiet, calls: 20, failures: 15, meanLatencyMs: 10, stddevLatencyMs: 1 }, 10).score, 55);
    assert.equal(runtimeTrustScore({ ...quiet, calls: 20, meanLatencyMs: 10, stddevLatencyMs: 40 }, 10).score, 85);
    assert.equal(runtimeTrustScore({ ...quiet, deniedEgress: 2 }, 10).score, 90);
    assert.equal(runtimeTrustScore({ ...quiet, deniedEgress: 50 }, 10).score, 75, 'denied public hosts: 5 each, at most 25 (issue #23)');
    assert.equal(runtimeTrustScore({ ...quiet, userReports: 5 }, 10).score, 55, 'user reports: 15 each, at most 45 (issue #23)');
    assert.equal(runtimeTrustScore({ calls: 20, failures: 20, meanLatencyMs: 10, stddevLatencyMs: 40, deniedEgress: 9, userReports: 9 }, 10).score, 0);
  });
});

describe('egress targets (HOST[:PORT])', () => {
  it('parses names, IPv4 and IPv6 with and without a port (443 by default), lower-cased', () => {
    assert.deepEqual(parseEgressTarget('API.GitHub.com'), { host: 'api.github.com', port: 443 });
    assert.deepEqual(parseEgressTarget('127.0.0.1:5432'), { host: '127.0.0.1', port: 5432 });
    assert.deepEqual(parseEgressTarget('[::1]:6379'), { host: '::1', port: 6379 });
    assert.deepEqual(parseEgressTarget('::1'), { host: '::1', port: 443 });
  });
  it('refuses what is not a host or port', () => {
    for (const bad of ['', 'http://x.com', 'a b', 'x.com:0', 'x.com:70000', 'x.com:8a', '-x.com', 'x..com']) {
      assert.throws(() => parseEgressTarget(bad), /not a host name|port must be/, bad);
    }
  });
});
