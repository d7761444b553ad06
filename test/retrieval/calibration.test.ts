/**
 * The learned-example similarity floor is computed per embedder (issue #25), not hard-coded:
 * it is the (1 − falseMatchRate) quantile of different-tool request pairs, so it differs between
 * embedders, moves with the rate, and is what the learning service ranks with.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calibrateFloor, shippedCalibrationGroups } from '../../src/retrieval/calibration.ts';
import { calibrateAgreementFloor } from '../../src/selection/learning/agreement.ts';
import { contentTerms } from '../../src/selection/learning/overlay.ts';
import { createOfflineEmbedder } from '../../src/retrieval/embedders/offline.ts';
import type { Embedder } from '../../src/retrieval/embedders/embedder.ts';
import { createLearning } from '../../src/selection/learning/learning.ts';
import type { Database } from '../../src/store/database.ts';

/** A 2-d embedder whose vectors are given per text: the floor can be worked out by hand. */
function fixed(vectors: Record<string, [number, number]>): Embedder {
  return {
    specificationVersion: 'v1',
    provider: 'fixed',
    modelId: 'fixed',
    dimensions: 2,
    maxBatchSize: 100,
    async embed(texts) {
      return texts.map((text) => {
        const [x, y] = vectors[text]!;
        const norm = Math.hypot(x, y);
        return Float32Array.from([x / norm, y / norm]);
      });
    },
  };
}

describe('similarity floor calibration', () => {
  it('is the quantile of different-tool similarities (worked example)', async () => {
    const angle = (degrees: number): [number, number] => [Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180)];
    const embedder = fixed({ a1: angle(0), a2: angle(10), b1: angle(90), b2: angle(60) });
    const result = await calibrateFloor(embedder, [['a1', 'a2'], ['b1', 'b2']], { falseMatchRate: 0.25 });
    // Different-tool pairs: a1-b1 cos 90, a1-b2 cos 60, a2-b1 cos 80, a2-b2 cos 50; the 75 % quantile is cos 60 = 0.5.
    assert.ok(Math.abs(result.floor - 0.5) < 1e-6, String(result.floor));
    assert.equal(result.samePairs, 2);
    assert.equal(result.differentPairs, 4);
    assert.equal(result.sameToolAbove, 1);
    const stricter = await calibrateFloor(embedder, [['a1', 'a2'], ['b1', 'b2']], { falseMatchRate: 0 });
    assert.ok(Math.abs(stricter.floor - Math.cos((50 * Math.PI) / 180)) < 1e-6);
  });

  it('differs between embedders on the shipped public requests', async () => {
    const groups = shippedCalibrationGroups();
    assert.ok(groups.length >= 40);
    const hashed = await calibrateFloor(createOfflineEmbedder(), groups, { maxGroups: 40 });
    const wider = await calibrateFloor(createOfflineEmbedder({ ngramWeight: 1.5 }), groups, { maxGroups: 40 });
    assert.ok(hashed.differentToolAbove <= 0.051, String(hashed.differentToolAbove));
    assert.ok(hashed.sameMedian > hashed.differentMedian);
    assert.notEqual(hashed.floor, wider.floor);
  });

  it('is what the learning service ranks with', async () => {
    const embedder = createOfflineEmbedder();
    const learning = createLearning({ db: {} as Database, embedder, settings: { sweepIntervalMs: 0 } });
    await learning.flush();
    // Nothing to learn or rank yet: no calibration (a CLI process never pays for it).
    assert.equal(learning.stats().calibration, undefined);
    // A search loads its organisation's learned examples; none (this stub database has none to
    // give) need no floor, so a search alone does not calibrate either.
    learning.overlayFor(null);
    await learning.flush();
    assert.equal(learning.stats().calibration, undefined, 'a search with nothing learned calibrates nothing');
    // A capture compares requests with the floor: the first task that needs it (it fails on this
    // stub database after the calibration, which is fine).
    learning.observe({ eventId: 'e1', source: 'api', calledToolIds: ['t1'], success: true, flaggedToolIds: [] });
    await learning.flush();
    const expected = await calibrateFloor(embedder, shippedCalibrationGroups(), { maxGroups: 40 });
    assert.equal(learning.stats().minSimilarity, expected.floor);
    assert.equal(learning.stats().calibration?.model, embedder.modelId);
    // The agreement floor of learned requests (issue #25) is computed on the same public data.
    assert.equal(learning.stats().agreement?.floor, calibrateAgreementFloor(shippedCalibrationGroups(), contentTerms, { maxGroups: 80 }).floor);
    await learning.close();
    const fixedFloor = createLearning({ db: {} as Database, embedder, settings: { sweepIntervalMs: 0, minSimilarity: 0.5 } });
    await fixedFloor.flush();
    assert.equal(fixedFloor.stats().minSimilarity, 0.5);
    await fixedFloor.close();
  });
});
