import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { percentile } from './stats.ts';

describe('percentile', () => {
  it('nearest rank returns an observed value', () => {
    const values = [10, 20, 30, 40];
    assert.equal(percentile(values, 0.5), 20);
    assert.equal(percentile(values, 0.75), 30);
    assert.equal(percentile(values, 0.99), 40);
    assert.equal(percentile(values, 0), 10);
  });
  it('linear interpolates between ranks, as percentile_cont does', () => {
    assert.equal(percentile([1, 2, 3, 4], 0.5, 'linear'), 2.5);
    assert.ok(Math.abs(percentile([1, 2, 3, 4], 0.95, 'linear')! - 3.85) < 1e-9);
    assert.equal(percentile([7], 0.99, 'linear'), 7);
  });
  it('has no value for no observations', () => {
    assert.equal(percentile([], 0.5), undefined);
    assert.equal(percentile([], 0.5, 'linear'), undefined);
  });
});
