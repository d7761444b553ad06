import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { shippedCalibrationGroups } from '../../retrieval/calibration.ts';
import { calibrateAgreementFloor, exampleWeights } from './agreement.ts';
import { contentTerms } from './overlay.ts';

const example = (id: string, toolId: string, contributor: string, text: string) => ({ id, toolId, contributor, terms: contentTerms(text) });

describe('learned example agreement (issue #25)', () => {
  it('a lone example carries the share, agreeing contributors full weight, contradicted ones fade', () => {
    const weights = exampleWeights(
      [
        example('a', 'convert', 'u1', 'how many yen will my dollars buy'),
        example('b', 'convert', 'u2', 'how many yen for my dollars'),
        example('c', 'email', 'u3', 'how many yen will my dollars buy'),
        example('d', 'weather', 'u1', 'forecast for Oslo tomorrow'),
        // One contributor repeating itself agrees with nobody.
        example('e', 'maps', 'u4', 'directions from Bergen to Voss'),
        example('f', 'maps', 'u4', 'directions from Bergen to Voss by train'),
      ],
      { similarityFloor: 0.2, agreementShare: 0.5 },
    );
    assert.equal(weights.get('d'), 0.5);
    assert.equal(weights.get('e'), 0.5);
    assert.ok(Math.abs(weights.get('a')! - 2 / 3) < 1e-9, String(weights.get('a')));
    assert.ok(Math.abs(weights.get('c')! - 0.5 / 3) < 1e-9, String(weights.get('c')));
  });

  it('computes its floor from public requests (not a constant): the 95th percentile of different-tool pairs', () => {
    const groups = shippedCalibrationGroups();
    const calibrated = calibrateAgreementFloor(groups, contentTerms, { maxGroups: 80 });
    assert.ok(calibrated.floor > 0 && calibrated.floor < 1, JSON.stringify(calibrated));
    assert.ok(calibrated.sameToolAbove > 0.2, 'same-tool requests mostly agree above it');
    const n = groups.filter((group) => group.length >= 2).slice(0, 80).reduce((sum, group) => sum + Math.min(4, group.length), 0);
    assert.equal(calibrated.differentPairs + calibrated.samePairs, (n * (n - 1)) / 2, 'every pair of the chosen requests');
    const stricter = calibrateAgreementFloor(groups, contentTerms, { maxGroups: 80, falseMatchRate: 0.01 });
    assert.ok(stricter.floor > calibrated.floor);
    const other = calibrateAgreementFloor(groups.slice(80), contentTerms, { maxGroups: 80 });
    assert.notEqual(other.floor, calibrated.floor, 'other data, another floor');
  });
});
