import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../core/errors.ts';
import { assertSecretAllowed, assertSettingAllowed, mergeLaunchEnv } from './plugin-env.ts';

const none = { credentials: [], secretKeys: new Set<string>() };

describe('plugin settings rules (plugin-env.ts)', () => {
  it('accepts ordinary variables, an optional declared one, and empty values', () => {
    assert.doesNotThrow(() => assertSettingAllowed('p', 'MEMORY_FILE_PATH', '/data/m.jsonl', { credentials: [{ name: 'MEMORY_FILE_PATH', required: false, as: 'env' }], secretKeys: new Set() }));
    assert.doesNotThrow(() => assertSettingAllowed('p', 'DEBUG', '', none));
  });

  it('refuses required and header credentials, naming `plugin secret set`', () => {
    for (const credential of [{ name: 'API_KEY', required: true, as: 'env' as const }, { name: 'API_KEY', required: false, as: 'header' as const, header: 'X-Api-Key' }]) {
      assert.throws(
        () => assertSettingAllowed('p', 'API_KEY', 'k', { credentials: [credential], secretKeys: new Set() }),
        (error: unknown) => isQuiverError(error, 'invalid_input') && /quiver plugin secret set p API_KEY/.test((error as Error).message),
      );
    }
  });

  it('refuses bad names, loader and Quiver variables (any case), and a key stored as a secret', () => {
    for (const key of ['', '9X', 'A-B', 'ld_preload', 'LD_LIBRARY_PATH', 'QUIVER_HOME']) {
      assert.throws(() => assertSettingAllowed('p', key, 'v', none), (error: unknown) => isQuiverError(error, 'invalid_input'), key);
    }
    assert.throws(() => assertSettingAllowed('p', 'TOKEN', 'v', { credentials: [], secretKeys: new Set(['TOKEN']) }), (error: unknown) => isQuiverError(error, 'conflict'));
    assert.throws(() => assertSecretAllowed('p', 'MODE', new Set(['MODE'])), (error: unknown) => isQuiverError(error, 'conflict'));
    assert.doesNotThrow(() => assertSecretAllowed('p', 'TOKEN', new Set(['MODE'])));
    // A secret reaches the launch chain as much as a setting does: no loader or Quiver variables either.
    for (const key of ['LD_PRELOAD', 'GCONV_PATH', 'QUIVER_SUPERVISOR_ID']) {
      assert.throws(() => assertSecretAllowed('p', key, new Set()), (error: unknown) => isQuiverError(error, 'invalid_input'), key);
    }
  });

  it('lets a secret win over a setting of the same key in the launch environment', () => {
    assert.deepEqual(mergeLaunchEnv({ A: 'plain', B: 'b' }, { A: 'secret' }), { A: 'secret', B: 'b' });
  });
});
