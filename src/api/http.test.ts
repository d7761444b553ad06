import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_ERROR_CODES } from '../core/errors.ts';
import { statusForCode } from './http.ts';

describe('HTTP status of error codes', () => {
  it('maps every code to a 4xx or 5xx, and only bugs and unreachable upstreams to 5xx', () => {
    for (const code of ALL_ERROR_CODES) {
      const status = statusForCode(code);
      assert.ok(status >= 400 && status <= 599, `${code} → ${status}`);
    }
    assert.equal(statusForCode('invalid_input'), 400);
    assert.equal(statusForCode('not_found'), 404);
    assert.equal(statusForCode('missing_credential'), 409);
    assert.equal(statusForCode('git_failed'), 422);
    assert.equal(statusForCode('internal'), 500);
  });
});
