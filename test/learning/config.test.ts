import { it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { perContributorCap } from '../../src/selection/learning/index.ts';

it('QUIVER_LEARNING_* : defaults, overrides and refusals (issue #13)', () => {
  const base = { QUIVER_DATABASE_URL: 'memory://' };
  assert.deepEqual(loadConfig(base).learning, { enabled: true, perToolCap: 50, contributorShare: 0.34, retentionDays: 90 });
  assert.equal(perContributorCap(loadConfig(base).learning), 17);
  const set = loadConfig({ ...base, QUIVER_LEARNING_ENABLED: '0', QUIVER_LEARNING_PER_TOOL_CAP: '10', QUIVER_LEARNING_CONTRIBUTOR_SHARE: '0.5', QUIVER_LEARNING_RETENTION_DAYS: '0' }).learning;
  assert.deepEqual(set, { enabled: false, perToolCap: 10, contributorShare: 0.5, retentionDays: 0 });
  assert.equal(loadConfig({ ...base, QUIVER_LEARNING_ENABLED: 'yes' }).learning.enabled, true);
  for (const bad of [{ QUIVER_LEARNING_ENABLED: 'maybe' }, { QUIVER_LEARNING_PER_TOOL_CAP: '0' }, { QUIVER_LEARNING_CONTRIBUTOR_SHARE: '0' }, { QUIVER_LEARNING_CONTRIBUTOR_SHARE: '1.5' }, { QUIVER_LEARNING_RETENTION_DAYS: '-1' }]) {
    assert.throws(() => loadConfig({ ...base, ...bad }), /QUIVER_LEARNING/, JSON.stringify(bad));
  }
});
