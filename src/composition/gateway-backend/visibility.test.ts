import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BackendSession } from '../../gateway/backend.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import { createSessionVisibility } from './visibility.ts';

const tool = (qualifiedName: string, visibility = 'callable'): SelectionCandidate =>
  ({ id: qualifiedName, qualifiedName, name: qualifiedName.split('__')[1], pluginName: qualifiedName.split('__')[0], visibility, annotations: {}, parameters: {} }) as unknown as SelectionCandidate;

const session = (expertAllowList?: string[]): BackendSession => ({ sessionId: 's', workspace: 'default', roles: [], ...(expertAllowList ? { expertAllowList } : {}) }) as unknown as BackendSession;

describe('session visibility index (issue #28)', () => {
  it('follows the list the engine returns on every call: a new list is indexed anew, the old index is not served', async () => {
    let list = [tool('a__one'), tool('a__two'), tool('b__mid', 'silent')];
    let asked = 0;
    const visibility = createSessionVisibility({ visibleTools: async () => (asked++, { tools: list, pins: [], warnings: [] }) } as never);
    const first = await visibility.index(session());
    assert.deepEqual([...first.byName.keys()], ['a__one', 'a__two'], 'silent tools are not visible');
    assert.deepEqual([...first.byPlugin.keys()], ['a']);
    assert.equal(await visibility.index(session()), first, 'the same list is indexed once');
    // The engine's caches were invalidated (a quarantine, a policy change): it returns a new list.
    list = [tool('a__one')];
    const second = await visibility.index(session());
    assert.equal(second.byName.has('a__two'), false, 'a tool the engine no longer returns stays visible');
    assert.equal(asked, 3, 'the engine is asked on every call');
  });

  it('keeps expert allow-lists apart on the same engine list', async () => {
    const list = [tool('a__one'), tool('a__two')];
    const visibility = createSessionVisibility({ visibleTools: async () => ({ tools: list, pins: [], warnings: [] }) } as never);
    const expert = await visibility.index(session(['a__two']));
    assert.deepEqual([...expert.byName.keys()], ['a__two']);
    assert.deepEqual([...(await visibility.index(session())).byName.keys()], ['a__one', 'a__two']);
    assert.deepEqual([...(await visibility.index(session(['a__one']))).byName.keys()], ['a__one']);
    assert.deepEqual([...(await visibility.visiblePlugins(session(['a__one']))).get('a')!.map((t) => t.name)], ['one']);
  });
});
