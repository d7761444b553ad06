/**
 * JSON safety checks at the boundary (issue #18, finding 7): NUL characters in strings and keys,
 * and nesting depth, found with a path and refused as `invalid_input`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { isQuiverError } from './errors.ts';
import { MAX_JSON_DEPTH, assertJsonSafe, findJsonHazard, hasNulCharacter, parseOrThrow } from './validation.ts';

/** `{"a":{"a":…}}` nested `levels` deep (built without recursion). */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('JSON safety', () => {
  it('accepts ordinary JSON, unicode included', () => {
    assert.equal(findJsonHazard({ query: 'wetter in zürich ☀', k: 3, tags: ['a', null, true, 1.5], nested: { deep: [[['x']]] } }), undefined);
    assert.equal(findJsonHazard('plain'), undefined);
    assert.equal(findJsonHazard(null), undefined);
  });

  it('finds a NUL in a string value, with its path', () => {
    assert.deepEqual(findJsonHazard({ context: { tags: ['ok', 'b\u0000d'] } }), { path: 'context.tags.1', message: 'contains a NUL character (\\u0000)' });
    assert.deepEqual(findJsonHazard('\u0000'), { path: '(root)', message: 'contains a NUL character (\\u0000)' });
  });

  it('finds a NUL in a key', () => {
    const issue = findJsonHazard({ outer: { ['k\u0000']: 1 } });
    assert.equal(issue?.path, 'outer');
    assert.match(issue!.message, /key containing a NUL/);
  });

  it('allows exactly MAX_JSON_DEPTH levels and refuses one more', () => {
    assert.equal(findJsonHazard(nested(MAX_JSON_DEPTH)), undefined);
    assert.match(findJsonHazard(nested(MAX_JSON_DEPTH + 1))!.message, /nested deeper than 64/);
    assert.match(findJsonHazard(nested(3), 2)!.message, /deeper than 2/);
  });

  it('reports 5,000 (and 100,000) levels without overflowing the stack', () => {
    const deepArray = JSON.parse('['.repeat(5_000) + ']'.repeat(5_000)) as unknown;
    assert.match(findJsonHazard(deepArray)!.message, /nested deeper/);
    assert.match(findJsonHazard(nested(100_000))!.message, /nested deeper/);
  });

  it('assertJsonSafe throws invalid_input naming the input and listing the issue', () => {
    assert.doesNotThrow(() => assertJsonSafe({ a: 'b' }, 'body'));
    assert.throws(
      () => assertJsonSafe({ query: 'echo\u0000' }, 'selection request'),
      (error) => isQuiverError(error, 'invalid_input') && /selection request: query: contains a NUL/.test(error.message) && Array.isArray((error.details as { issues: unknown[] }).issues),
    );
  });

  it('hasNulCharacter', () => {
    assert.equal(hasNulCharacter('abc'), false);
    assert.equal(hasNulCharacter('a\u0000'), true);
  });

  it('parseOrThrow still reports schema problems as invalid_input', () => {
    assert.throws(() => parseOrThrow(z.object({ k: z.number() }), { k: 'x' }, 'thing'), (error) => isQuiverError(error, 'invalid_input'));
  });
});
