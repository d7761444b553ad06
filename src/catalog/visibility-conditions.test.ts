import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TIER_ORDER, visibilityConditionsSchemas } from './visibility-conditions.ts';

function issues(type: keyof typeof visibilityConditionsSchemas, input: unknown): string[] {
  const result = visibilityConditionsSchemas[type].safeParse(input);
  assert.equal(result.success, false, `expected ${JSON.stringify(input)} to be refused for ${type}`);
  return result.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('visibility conditions (seed 001 §5.1)', () => {
  it('normalises singular shorthands into lists', () => {
    assert.deepEqual(visibilityConditionsSchemas.org.parse({ orgId: 'acme' }), { orgIds: ['acme'] });
    assert.deepEqual(visibilityConditionsSchemas.org.parse({ orgIds: ['a', 'b', 'a'] }), { orgIds: ['a', 'b'] });
    assert.deepEqual(visibilityConditionsSchemas.user.parse({ userId: 'u1' }), { userIds: ['u1'] });
    assert.deepEqual(visibilityConditionsSchemas.page.parse({ page: 'deals*' }), { pages: ['deals*'] });
    assert.deepEqual(visibilityConditionsSchemas.role.parse({ role: 'admin' }), { roles: ['admin'], rolesMatch: 'any' });
    assert.deepEqual(visibilityConditionsSchemas.role.parse({ roles: ['a', 'b'], rolesMatch: 'all' }), { roles: ['a', 'b'], rolesMatch: 'all' });
  });

  it('accepts tier comparisons and a bare tier', () => {
    assert.deepEqual(visibilityConditionsSchemas.tier.parse({ tier: { gte: 'teams' } }), { tier: { gte: 'teams' } });
    assert.deepEqual(visibilityConditionsSchemas.tier.parse({ tier: 'teams' }), { tier: { eq: 'teams' } });
    assert.deepEqual(visibilityConditionsSchemas.tier.parse({ tier: { in: ['open_source', 'shared_access'], lt: 'government' } }), {
      tier: { in: ['open_source', 'shared_access'], lt: 'government' },
    });
    assert.ok(TIER_ORDER.indexOf('teams') > TIER_ORDER.indexOf('shared_access'));
  });

  it('refuses unknown tiers, operators and empty comparisons', () => {
    assert.ok(issues('tier', { tier: { gte: 'platinum' } }).some((i) => i.startsWith('tier')));
    assert.ok(issues('tier', { tier: { approx: 'teams' } }).length > 0);
    assert.ok(issues('tier', { tier: {} }).some((i) => /at least one/.test(i)));
  });

  it('refuses missing, foreign and unknown keys per type', () => {
    assert.ok(issues('org', {}).some((i) => /needs orgIds or orgId/.test(i)));
    assert.ok(issues('org', { orgIds: [] }).some((i) => i.startsWith('orgIds')));
    assert.ok(issues('org', { orgId: 'a', tier: 'teams' }).some((i) => /cannot have tier conditions/.test(i)));
    assert.ok(issues('user', { userid: 'x' }).some((i) => /Unrecognized key/.test(i)));
    assert.ok(issues('page', { page: 'a*b' }).some((i) => i.startsWith('page')));
    assert.ok(issues('role', { rolesMatch: 'all' }).some((i) => /rolesMatch needs roles/.test(i)));
    assert.ok(issues('composite', {}).some((i) => /at least one/.test(i)));
  });

  it('combines kinds in a composite rule', () => {
    assert.deepEqual(visibilityConditionsSchemas.composite.parse({ orgId: 'acme', tier: { gte: 'teams' }, role: 'admin' }), {
      orgIds: ['acme'],
      roles: ['admin'],
      rolesMatch: 'any',
      tier: { gte: 'teams' },
    });
  });
});
