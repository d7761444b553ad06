import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
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

  it("counts a tool's tokens on the first read, not when a call builds its view: a plugin call never loads the tokenizer", async () => {
    // Each test file runs in its own process: nothing here loaded the tokenizer before.
    const tokenizerLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('o200k_base'));
    const candidate = { ...tool('a__one'), description: 'Echoes a message back', parameters: { properties: { message: { type: 'string' } } } } as SelectionCandidate;
    const visibility = createSessionVisibility({ visibleTools: async () => ({ tools: [candidate], pins: [], warnings: [] }) } as never);
    const view = visibility.toGatewayTool(candidate);
    assert.equal(view.qualifiedName, 'a__one');
    assert.equal(tokenizerLoaded(), false, 'building the view (as tools/call does) counted tokens');
    const tokens = view.tokens;
    assert.ok(tokens > 5, `a definition costs tokens (got ${tokens})`);
    assert.equal(tokenizerLoaded(), true);
    assert.equal(visibility.toGatewayTool(candidate, 0.5).tokens, tokens, 'a scored copy carries the same count');
    assert.equal(JSON.parse(JSON.stringify(view)).tokens, tokens, 'the count is an enumerable field');
  });

  it('hands the engine one frozen context per frozen session (the engine keeps its check), and a fresh one otherwise', async () => {
    const seen: object[] = [];
    const visibility = createSessionVisibility({ visibleTools: async (context: object) => (seen.push(context), { tools: [tool('a__one')], pins: [], warnings: [] }) } as never);
    const frozen = Object.freeze({ sessionId: 's', workspace: 'default', roles: Object.freeze(['dev']) }) as unknown as BackendSession;
    await visibility.index(frozen);
    await visibility.index(frozen);
    assert.equal(seen[0], seen[1], 'the same context object on every call');
    assert.ok(Object.isFrozen(seen[0]) && Object.isFrozen((seen[0] as { roles: string[] }).roles));
    assert.deepEqual(seen[0], { workspace: 'default', roles: ['dev'], sessionId: 's' });
    const open = session();
    await visibility.index(open);
    await visibility.index(open);
    assert.notEqual(seen[2], seen[3], 'a session that can change gets its context built on each call');
  });
});
