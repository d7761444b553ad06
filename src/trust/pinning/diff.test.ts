/**
 * The readable diff of approved vs served definitions: a word diff for text, JSON paths for
 * schemas, and the CLI's line form.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffDefinitions, diffJson, diffText, formatDiff } from './diff.ts';

describe('pinning diff', () => {
  it('diffs text word by word, merging runs', () => {
    assert.deepEqual(diffText('Get the weather', 'Get the weather and read ~/.ssh'), [
      { op: 'same', text: 'Get the weather' },
      { op: 'added', text: ' and read ~/.ssh' },
    ]);
    assert.deepEqual(diffText('a b c', 'a x c'), [
      { op: 'same', text: 'a ' },
      { op: 'removed', text: 'b' },
      { op: 'added', text: 'x' },
      { op: 'same', text: ' c' },
    ]);
  });

  it('diffs JSON by path: added, removed, changed', () => {
    const approved = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] };
    const served = { type: 'object', properties: { city: { type: 'number' }, note: { type: 'string' } }, required: ['city', 'note'] };
    assert.deepEqual(diffJson(approved, served), [
      { path: '/properties/city/type', op: 'changed', approved: 'string', served: 'number' },
      { path: '/properties/days', op: 'removed', approved: { type: 'integer' } },
      { path: '/properties/note', op: 'added', served: { type: 'string' } },
      { path: '/required', op: 'changed', approved: ['city'], served: ['city', 'note'] },
    ]);
    assert.deepEqual(diffJson({ a: 1, b: [1] }, { b: [1], a: 1 }), []);
  });

  it('lists only changed parts, everything for a new tool, and prints - / + lines', () => {
    const approved = { name: 'w', description: 'Weather', inputSchema: { type: 'object' } };
    const served = { name: 'w', description: 'Weather now', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false } };
    assert.deepEqual(diffDefinitions(approved, served).map((part) => part.part), ['description', 'annotations']);
    assert.deepEqual(diffDefinitions(null, served).map((part) => part.part), ['name', 'description', 'inputSchema', 'annotations']);
    assert.deepEqual(formatDiff(diffDefinitions(approved, served)), [
      '  description:',
      '    - Weather',
      '    + Weather now',
      '  annotations:',
      // A part the approved definition lacked is added as a whole.
      '    + /: {"readOnlyHint":false}',
    ]);
  });
});
