/**
 * Issue #11 follow-up: the rule that lets a verified staged version take traffic (pure;
 * the pipeline itself runs for real in verification.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rejectionOf, type StagedVerdict } from '../../src/rollouts/index.ts';

const verdict = (trustLevel: StagedVerdict['trustLevel'], caps: StagedVerdict['caps'] = []): StagedVerdict => ({ trustLevel, score: 80, grade: 'B', caps, reportJobId: 'ver-x' });

describe('rejectionOf (the verification gate of a rollout)', () => {
  it('admits a version at or above the installed level', () => {
    assert.equal(rejectionOf(verdict('COMMUNITY'), 'COMMUNITY'), undefined);
    assert.equal(rejectionOf(verdict('ENTERPRISE'), 'COMMUNITY'), undefined);
  });
  it('rejects a version below the installed level, naming both', () => {
    assert.match(rejectionOf(verdict('COMMUNITY'), 'ENTERPRISE') ?? '', /verified at COMMUNITY .*below ENTERPRISE/);
  });
  it('with an installed version never verified, admits any level but a hard UNVERIFIED cap', () => {
    assert.equal(rejectionOf(verdict('UNVERIFIED'), null), undefined, 'a low score alone is no finding');
    const poisoned = verdict('UNVERIFIED', [{ stage: 'securityScan', level: 'UNVERIFIED', reason: 'tool poisoning in 1 place' }]);
    assert.match(rejectionOf(poisoned, null) ?? '', /capped it at UNVERIFIED \(securityScan: tool poisoning in 1 place\)/);
  });
  it('a COMMUNITY cap (missing evidence, e.g. advisories unreachable) is not a rejection by itself', () => {
    assert.equal(rejectionOf(verdict('COMMUNITY', [{ stage: 'securityScan', level: 'COMMUNITY', reason: 'advisories unavailable' }]), 'COMMUNITY'), undefined);
  });
});
