import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.ts';
import type { SessionIdentity } from '../../gateway/backend.ts';
import { createExposureModes } from './exposure-modes.ts';

const identity = (workspace: string) => ({ workspace, project: null, orgId: null, userId: null, roles: [], tier: null }) as SessionIdentity;

describe('gateway backend exposure modes', () => {
  test('a workspace mode applies after a refresh; unknown modes and workspaces give none', async () => {
    const modes = createExposureModes(
      { workspaceExposureModes: async () => new Map([['docs', 'capabilities'], ['odd', 'everything']]) },
      silentLogger,
    );
    assert.equal(modes.modeFor(identity('docs')), undefined, 'nothing is known before the first refresh');
    await modes.refresh();
    assert.equal(modes.modeFor(identity('docs')), 'capabilities');
    assert.equal(modes.modeFor(identity('odd')), undefined);
    assert.equal(modes.modeFor(identity('other')), undefined);
  });

  test('a failed refresh keeps the modes already known and does not throw', async () => {
    let fail = false;
    const modes = createExposureModes(
      {
        workspaceExposureModes: async () => {
          if (fail) throw new Error('database away');
          return new Map([['docs', 'all']]);
        },
      },
      silentLogger,
    );
    await modes.refresh();
    fail = true;
    await modes.refresh();
    assert.equal(modes.modeFor(identity('docs')), 'all');
  });
});
