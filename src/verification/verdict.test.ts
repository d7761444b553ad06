/** The verdict: seed weights, grade bands, trust bands, caps, execution modes. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { computeVerdict, gradeForScore, weightedScore } from './verdict.ts';

const all = (score: number) => ({ staticAnalysis: { score }, schemaValidation: { score }, sandboxExecution: { score }, securityScan: { score }, compatibility: { score } });

it('weighs the five stages as seed 000 §4.2 does and ignores source', () => {
  // Appendix B's stage scores: 92, 100, 85, 88, 78 → 0.2·92 + 0.15·100 + 0.25·85 + 0.25·88 + 0.15·78 = 87.95 → 88.
  assert.equal(weightedScore({ source: 0, staticAnalysis: 92, schemaValidation: 100, sandboxExecution: 85, securityScan: 88, compatibility: 78 }), 88);
  assert.equal(weightedScore({ staticAnalysis: 100 }), 20, 'a missing stage counts 0');
  assert.equal(weightedScore({ schemaValidation: 100, securityScan: 100 }), 40);
});

it('grades: 87 is an A as in Appendix B; bands A ≥ 85, B ≥ 70, C ≥ 55, D ≥ 40, else F', () => {
  assert.deepEqual([100, 87, 85, 84, 70, 69, 55, 54, 40, 39, 0].map(gradeForScore), ['A', 'A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'F', 'F']);
});

it('maps the score to the seed trust band, but a verdict never goes above COMMUNITY (issue #23)', () => {
  const verdict = computeVerdict(all(87));
  assert.equal(verdict.overallScore, 87);
  assert.equal(verdict.scoreLevel, 'VERIFIED_PUBLISHER', 'the band of the score is kept for the report');
  assert.equal(verdict.trustLevel, 'COMMUNITY', 'a score alone never loosens isolation');
  assert.equal(verdict.executionMode, 'sandbox_egress_allowlist');
  assert.equal(verdict.approved, true);
  assert.equal(computeVerdict(all(39)).trustLevel, 'UNVERIFIED');
  assert.equal(computeVerdict(all(39)).approved, false);
  assert.equal(computeVerdict(all(39)).executionMode, 'sandbox_no_network');
  assert.equal(computeVerdict(all(100)).scoreLevel, 'OFFICIAL');
  assert.equal(computeVerdict(all(100)).trustLevel, 'COMMUNITY');
  assert.equal(computeVerdict(all(50)).trustLevel, 'COMMUNITY');
});

it('the strictest cap of any stage bounds the level, whatever the score', () => {
  const verdict = computeVerdict({
    ...all(100),
    securityScan: { score: 100, cap: { level: 'COMMUNITY', reason: 'advisories unreachable' } },
    source: { score: 100, cap: { level: 'UNVERIFIED', reason: 'integrity mismatch' } },
  });
  assert.equal(verdict.overallScore, 100);
  assert.equal(verdict.scoreLevel, 'OFFICIAL');
  assert.equal(verdict.trustLevel, 'UNVERIFIED');
  assert.deepEqual(verdict.caps.map((cap) => cap.stage), ['source', 'securityScan']);
  const higherCap = computeVerdict({ ...all(50), compatibility: { score: 50, cap: { level: 'OFFICIAL', reason: 'no effect' } } });
  assert.equal(higherCap.trustLevel, 'COMMUNITY', 'a cap never raises the level');
});

it('a stage that did not complete caps the level at UNVERIFIED, whatever the others scored', () => {
  const verdict = computeVerdict({ ...all(100), sandboxExecution: { score: 0, status: 'not_run' }, compatibility: { score: 100, status: 'passed' } });
  assert.equal(verdict.overallScore, 75);
  assert.equal(verdict.scoreLevel, 'ENTERPRISE');
  assert.equal(verdict.trustLevel, 'UNVERIFIED');
  assert.equal(verdict.approved, false);
  assert.match(verdict.caps[0]!.reason, /sandboxExecution stage did not complete \(not_run\)/);
  assert.equal(computeVerdict({ ...all(100), staticAnalysis: { score: 100, status: 'timeout' } }).trustLevel, 'UNVERIFIED');
});
