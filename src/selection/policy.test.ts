import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compilePolicy, evaluateConditions, evaluateTier, parseConditions, policyCacheKey, type PolicyRule, type PolicyTarget } from './policy.ts';

const T1: PolicyTarget = { id: 'tool-1', categoryId: 'cat-a', pluginId: 'plug-x' };
const T2: PolicyTarget = { id: 'tool-2', categoryId: 'cat-b', pluginId: 'plug-x' };
const T3: PolicyTarget = { id: 'tool-3', categoryId: null, pluginId: null };

let counter = 0;
function rule(partial: Partial<PolicyRule>): PolicyRule {
  counter++;
  return {
    id: partial.id ?? `r${String(counter).padStart(3, '0')}`,
    ruleType: 'composite',
    effect: 'deny',
    toolId: null,
    categoryId: null,
    pluginId: null,
    conditions: {},
    priority: 0,
    ...partial,
  };
}

describe('policy: tier comparisons', () => {
  const order = ['open_source', 'shared_access', 'teams', 'dedicated_vps', 'government'];
  it('orders the seed tiers', () => {
    assert.equal(evaluateTier({ gte: 'teams' }, 'teams', order), true);
    assert.equal(evaluateTier({ gte: 'teams' }, 'government', order), true);
    assert.equal(evaluateTier({ gte: 'teams' }, 'shared_access', order), false);
    assert.equal(evaluateTier({ gt: 'teams' }, 'teams', order), false);
    assert.equal(evaluateTier({ lt: 'teams' }, 'open_source', order), true);
    assert.equal(evaluateTier({ lte: 'teams' }, 'dedicated_vps', order), false);
    assert.equal(evaluateTier({ gte: 'shared_access', lt: 'government' }, 'dedicated_vps', order), true);
    assert.equal(evaluateTier({ gte: 'shared_access', lt: 'government' }, 'government', order), false);
  });
  it('compares equality and lists without needing an order', () => {
    assert.equal(evaluateTier({ eq: 'custom' }, 'custom', order), true);
    assert.equal(evaluateTier({ ne: 'teams' }, 'custom', order), true);
    assert.equal(evaluateTier({ in: ['teams', 'government'] }, 'teams', order), true);
    assert.equal(evaluateTier({ notIn: ['teams'] }, 'teams', order), false);
  });
  it('is unknown for an unknown or missing tier in ordered comparisons', () => {
    assert.equal(evaluateTier({ gte: 'teams' }, 'platinum', order), 'unknown');
    assert.equal(evaluateTier({ gte: 'platinum' }, 'teams', order), 'unknown');
    assert.equal(evaluateTier({ eq: 'teams' }, undefined, order), 'unknown');
    assert.equal(evaluateTier({ eq: 'teams' }, null, order), 'unknown');
    // false dominates unknown
    assert.equal(evaluateTier({ gte: 'platinum', eq: 'teams' }, 'open_source', order), false);
  });
});

describe('policy: conditions', () => {
  it('accepts normalised and shorthand forms', () => {
    assert.deepEqual(parseConditions({ orgId: 'a', orgIds: ['b', 'a'] })?.orgIds, ['b', 'a']);
    assert.deepEqual(parseConditions({ tier: 'teams' })?.tier, { eq: 'teams' });
    assert.deepEqual(parseConditions({ role: 'admin' })?.roles, ['admin']);
    assert.equal(parseConditions({})?.rolesMatch, 'any');
  });
  it('rejects unknown keys, bad shapes and rolesMatch without roles', () => {
    assert.equal(parseConditions({ org: 'a' }), undefined);
    assert.equal(parseConditions({ orgIds: 'a' }), undefined);
    assert.equal(parseConditions({ tier: {} }), undefined);
    assert.equal(parseConditions({ tier: { above: 'teams' } }), undefined);
    assert.equal(parseConditions({ rolesMatch: 'all' }), undefined);
    assert.equal(parseConditions({ pages: ['a*b'] }), undefined);
    assert.equal(parseConditions('nonsense'), undefined);
    assert.equal(parseConditions([1]), undefined);
  });
  it('evaluates each kind, ANDed, with unknown for missing attributes', () => {
    const parsed = parseConditions({ orgIds: ['o1'], pages: ['deals*'], roles: ['sales', 'admin'], rolesMatch: 'all', tier: { gte: 'teams' } })!;
    const full = { orgId: 'o1', page: 'deals-board', roles: ['admin', 'sales'], tier: 'government' };
    assert.equal(evaluateConditions(parsed, full), true);
    assert.equal(evaluateConditions(parsed, { ...full, orgId: 'o2' }), false);
    assert.equal(evaluateConditions(parsed, { ...full, page: 'contacts' }), false);
    assert.equal(evaluateConditions(parsed, { ...full, roles: ['sales'] }), false);
    assert.equal(evaluateConditions(parsed, { ...full, tier: 'open_source' }), false);
    assert.equal(evaluateConditions(parsed, { ...full, orgId: undefined }), 'unknown');
    assert.equal(evaluateConditions(parsed, { ...full, roles: undefined }), 'unknown');
    assert.equal(evaluateConditions(parsed, { ...full, page: null }), 'unknown');
    assert.equal(evaluateConditions(parseConditions({ roles: ['a', 'b'] })!, { roles: ['b'] }), true, 'any-match by default');
    assert.equal(evaluateConditions(parseConditions({ roles: ['a'] })!, { roles: [] }), false, 'no roles is known');
    assert.equal(evaluateConditions(parseConditions({ userIds: ['u1'] })!, { userId: 'u1' }), true);
    assert.equal(evaluateConditions(parseConditions({})!, {}), true, 'empty conditions always apply');
  });
  it('matches pages with the four pattern modes', () => {
    const check = (pattern: string, page: string) => evaluateConditions(parseConditions({ page: pattern })!, { page });
    assert.equal(check('deals', 'deals'), true);
    assert.equal(check('deals', 'deals-x'), false);
    assert.equal(check('deals*', 'deals-x'), true);
    assert.equal(check('*board', 'deals-board'), true);
    assert.equal(check('*al*', 'deals-board'), true);
    assert.equal(check('*zz*', 'deals-board'), false);
  });
});

describe('policy: compilePolicy', () => {
  it('allows everything without rules', () => {
    const policy = compilePolicy([], {});
    assert.equal(policy.allowsEverything, true);
    assert.equal(policy.allows(T1), true);
  });

  it('targets a tool, a category, a plugin or every tool', () => {
    const ctx = { orgId: 'o1' };
    assert.deepEqual([T1, T2, T3].map(compilePolicy([rule({ toolId: 'tool-1' })], ctx).allows), [false, true, true]);
    assert.deepEqual([T1, T2, T3].map(compilePolicy([rule({ categoryId: 'cat-b' })], ctx).allows), [true, false, true]);
    assert.deepEqual([T1, T2, T3].map(compilePolicy([rule({ pluginId: 'plug-x' })], ctx).allows), [false, false, true]);
    assert.deepEqual([T1, T2, T3].map(compilePolicy([rule({})], ctx).allows), [false, false, false]);
    // Several target columns: all must match.
    assert.deepEqual([T1, T2, T3].map(compilePolicy([rule({ pluginId: 'plug-x', categoryId: 'cat-a' })], ctx).allows), [false, true, true]);
  });

  it('lets a higher-priority allow override a lower deny, and deny win at equal priority', () => {
    const base = rule({ pluginId: 'plug-x', priority: 0 });
    const orgAllow = rule({ effect: 'allow', ruleType: 'org', pluginId: 'plug-x', conditions: { orgIds: ['o1'] }, priority: 10 });
    assert.equal(compilePolicy([base, orgAllow], { orgId: 'o1' }).allows(T1), true);
    assert.equal(compilePolicy([base, orgAllow], { orgId: 'o2' }).allows(T1), false);
    const tieAllow = rule({ effect: 'allow', toolId: 'tool-1', priority: 5, id: 'a-first' });
    const tieDeny = rule({ effect: 'deny', toolId: 'tool-1', priority: 5, id: 'z-last' });
    assert.equal(compilePolicy([tieAllow, tieDeny], {}).allows(T1), false);
    assert.equal(compilePolicy([tieDeny, tieAllow], {}).allows(T1), false);
    // A higher-priority deny beats a lower allow.
    assert.equal(compilePolicy([rule({ effect: 'allow', toolId: 'tool-1', priority: 1 }), rule({ toolId: 'tool-1', priority: 2 })], {}).allows(T1), false);
  });

  it('evaluates each of the six rule types', () => {
    const cases: Array<[string, unknown, object, object]> = [
      ['org', { orgIds: ['o1'] }, { orgId: 'o1' }, { orgId: 'o2' }],
      ['user', { userIds: ['u1'] }, { userId: 'u1' }, { userId: 'u2' }],
      ['page', { pages: ['admin*'] }, { page: 'admin-users' }, { page: 'deals' }],
      ['role', { roles: ['intern'] }, { roles: ['intern'] }, { roles: ['admin'] }],
      ['tier', { tier: { lt: 'teams' } }, { tier: 'open_source' }, { tier: 'teams' }],
      ['composite', { orgIds: ['o1'], tier: { eq: 'teams' } }, { orgId: 'o1', tier: 'teams' }, { orgId: 'o1', tier: 'government' }],
    ];
    for (const [ruleType, conditions, hit, miss] of cases) {
      const rules = [rule({ ruleType, conditions, toolId: 'tool-1' })];
      assert.equal(compilePolicy(rules, hit).allows(T1), false, `${ruleType} deny applies`);
      assert.equal(compilePolicy(rules, miss).allows(T1), true, `${ruleType} deny does not apply`);
    }
  });

  it('fails closed on unknown attributes: deny applies, allow does not', () => {
    const denyLowTiers = rule({ ruleType: 'tier', conditions: { tier: { lt: 'teams' } }, toolId: 'tool-1' });
    assert.equal(compilePolicy([denyLowTiers], {}).allows(T1), false, 'no tier: denied');
    assert.equal(compilePolicy([denyLowTiers], { tier: 'mystery' }).allows(T1), false, 'unknown tier: denied');
    assert.equal(compilePolicy([denyLowTiers], { tier: 'teams' }).allows(T1), true);
    const allowHighTiers = rule({ effect: 'allow', ruleType: 'tier', conditions: { tier: { gte: 'teams' } }, toolId: 'tool-1', priority: 10 });
    const denyAll = rule({ toolId: 'tool-1', priority: 0 });
    assert.equal(compilePolicy([denyAll, allowHighTiers], { tier: 'mystery' }).allows(T1), false, 'unknown tier never unlocks');
    assert.equal(compilePolicy([denyAll, allowHighTiers], { tier: 'government' }).allows(T1), true);
  });

  it('treats a malformed deny as a deny on its target and ignores a malformed allow', () => {
    const brokenDeny = rule({ conditions: { nonsense: true }, toolId: 'tool-1' });
    const brokenAllow = rule({ effect: 'allow', conditions: { nonsense: true }, toolId: 'tool-2', priority: 99 });
    const denyT2 = rule({ toolId: 'tool-2', priority: 0 });
    const policy = compilePolicy([brokenDeny, brokenAllow, denyT2], { orgId: 'o1' });
    assert.equal(policy.allows(T1), false);
    assert.equal(policy.allows(T2), false);
    assert.equal(policy.allows(T3), true);
    assert.deepEqual([...policy.malformedRuleIds].sort(), [brokenAllow.id, brokenDeny.id].sort());
    // Unknown effect or rule type: treated as deny.
    assert.equal(compilePolicy([rule({ effect: 'maybe', toolId: 'tool-3' })], {}).allows(T3), false);
    assert.equal(compilePolicy([rule({ ruleType: 'weird', effect: 'allow', toolId: 'tool-3' }), rule({ toolId: 'tool-3', priority: -1 })], {}).allows(T3), false);
  });

  it('skips inactive rules', () => {
    assert.equal(compilePolicy([rule({ toolId: 'tool-1', isActive: false })], {}).allows(T1), true);
  });

  it('keys the cache by every attribute a rule can read', () => {
    const a = policyCacheKey({ orgId: 'o', tier: 't', userId: 'u', roles: ['b', 'a'], page: 'p' });
    assert.equal(a, policyCacheKey({ orgId: 'o', tier: 't', userId: 'u', roles: ['a', 'b'], page: 'p' }));
    assert.notEqual(a, policyCacheKey({ orgId: 'o', tier: 't', userId: 'u', roles: ['a', 'b'], page: 'q' }));
    assert.notEqual(policyCacheKey({ roles: ['a,b'] }), policyCacheKey({ roles: ['a', 'b'] }));
    assert.notEqual(policyCacheKey({ roles: [] }), policyCacheKey({}));
    assert.notEqual(policyCacheKey({ orgId: 'a:b' }), policyCacheKey({ orgId: 'a', tier: 'b' }));
  });
});
