import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.ts';
import { CATALOG_CHANGED_CHANNEL } from '../../selection/index.ts';
import { createCatalogChanges } from './catalog-changes.ts';

describe('gateway backend catalog changes', () => {
  function setup(options: { failListen?: boolean } = {}) {
    const state = { listens: 0, unlistened: 0, channel: '', notify: (): void => undefined };
    const db = {
      async listen(channel: string, handler: () => void) {
        state.listens += 1;
        state.channel = channel;
        state.notify = handler;
        if (options.failListen) throw new Error('no listening');
        return async () => {
          state.unlistened += 1;
        };
      },
    };
    let cleared = 0;
    const changes = createCatalogChanges(db as never, () => (cleared += 1), silentLogger);
    return { changes, state, cleared: () => cleared };
  }

  test('one listener for all subscribers; a change clears first, then reaches every subscriber', async () => {
    const { changes, state, cleared } = setup();
    const heard: string[] = [];
    changes.onCatalogChanged(() => {
      assert.equal(cleared(), 1, 'caches are cleared before subscribers hear of the change');
      heard.push('a');
    });
    changes.onCatalogChanged(() => {
      throw new Error('a subscriber bug');
    });
    changes.onCatalogChanged(() => heard.push('c'));
    assert.equal(state.listens, 1);
    assert.equal(state.channel, CATALOG_CHANGED_CHANNEL);
    state.notify();
    assert.deepEqual(heard, ['a', 'c']);
  });

  test('an unsubscribed listener hears nothing; close stops listening', async () => {
    const { changes, state } = setup();
    let heard = 0;
    const unsubscribe = changes.onCatalogChanged(() => (heard += 1));
    unsubscribe();
    state.notify();
    assert.equal(heard, 0);
    await changes.close();
    assert.equal(state.unlistened, 1);
  });

  test('a listen that fails is logged, not thrown into the subscriber', async () => {
    let logged!: (message: string | undefined) => void;
    const warned = new Promise<string | undefined>((resolve) => (logged = resolve));
    const logger = { ...silentLogger, warn: (_context: object, message?: string) => logged(message) };
    const db = { listen: async () => Promise.reject(new Error('no listening')) };
    const changes = createCatalogChanges(db as never, () => undefined, logger);
    assert.equal(typeof changes.onCatalogChanged(() => undefined), 'function');
    assert.equal(await warned, 'gateway: could not listen for catalog changes');
    // Closing after a failed listen still succeeds (the failure was already reported).
    await changes.close();
  });
});
