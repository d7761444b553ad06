import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { incrementsOf, mergeIncrements, resolveCalled } from './outcomes.ts';
import { providerToolName } from '../provider-formats.ts';

const offered = [
  { id: 'id-1', qualifiedName: 'github__create_issue' },
  { id: 'id-2', qualifiedName: 'github__list_issues' },
];

describe('selection outcomes (pure parts)', () => {
  it('resolves ids, qualified and provider names; keeps unknown names as reported', () => {
    const gemini = providerToolName('github__list_issues', 'gemini');
    const { calledIds, stored, unresolved } = resolveCalled(offered, ['id-1', gemini, 'github__create_issue', 'elsewhere']);
    assert.deepEqual([...calledIds], ['id-1', 'id-2']);
    assert.deepEqual(stored, ['github__create_issue', 'github__list_issues', 'github__create_issue', 'elsewhere']);
    assert.deepEqual(unresolved, ['elsewhere']);
  });

  it('moves a called tool by the call’s success and counts every offered tool as selected', () => {
    assert.deepEqual(incrementsOf(['id-1', 'id-2'], new Set(['id-1']), true), [
      { toolId: 'id-1', alpha: 1, beta: 0, selections: 1, successes: 1 },
      { toolId: 'id-2', alpha: 0, beta: 0, selections: 1, successes: 0 },
    ]);
    assert.deepEqual(incrementsOf(['id-1'], new Set(['id-1']), false), [{ toolId: 'id-1', alpha: 0, beta: 1, selections: 1, successes: 0 }]);
  });

  it('sums increments per tool without changing its inputs', () => {
    const first = { toolId: 'id-1', alpha: 1, beta: 0, selections: 1, successes: 1 };
    const merged = mergeIncrements([first, { toolId: 'id-2', alpha: 0, beta: 1, selections: 1, successes: 0 }, { toolId: 'id-1', alpha: 0, beta: 1, selections: 1, successes: 0 }]);
    assert.deepEqual(merged, [
      { toolId: 'id-1', alpha: 1, beta: 1, selections: 2, successes: 1 },
      { toolId: 'id-2', alpha: 0, beta: 1, selections: 1, successes: 0 },
    ]);
    assert.deepEqual(first, { toolId: 'id-1', alpha: 1, beta: 0, selections: 1, successes: 1 });
  });
});
