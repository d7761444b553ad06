import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createCatalogService, type CatalogChangeEvent, type CatalogService } from './index.ts';
import { issuePaths, rejectsWithCode } from './test-support.ts';

describeEachBackend('catalog visibility rules', (backend) => {
  let db: Database;
  let catalog: CatalogService;
  const events: CatalogChangeEvent[] = [];
  let toolId: string;
  let categoryId: string;
  let pluginId: string;

  before(async () => {
    db = await backend.open();
    catalog = createCatalogService({ db, onChange: (event) => events.push(event) });
    await db.query("INSERT INTO plugins (name) VALUES ('crm')");
    categoryId = (await catalog.createCategory({ name: 'deals' })).id;
    const tool = await catalog.createTool({ name: 'list_deals', pluginName: 'crm', category: 'deals' });
    toolId = tool.id;
    pluginId = tool.pluginId!;
  });
  after(async () => {
    await db.close();
  });

  it('creates rules of every type with normalised conditions and lists them in evaluation order', async () => {
    const org = await catalog.createVisibilityRule({ ruleType: 'org', effect: 'allow', toolId, conditions: { orgId: 'acme' }, priority: 5 });
    assert.deepEqual(org.conditions, { orgIds: ['acme'] });
    assert.equal(org.isActive, true);
    assert.equal(org.description, '');
    const deny = await catalog.createVisibilityRule({ ruleType: 'tier', effect: 'deny', categoryId, conditions: { tier: { lt: 'teams' } }, priority: 5 });
    const user = await catalog.createVisibilityRule({ ruleType: 'user', effect: 'deny', pluginId, conditions: { userIds: ['u1'] } });
    const page = await catalog.createVisibilityRule({ ruleType: 'page', effect: 'allow', conditions: { pages: ['deals*', '*settings'] }, priority: 9 });
    const role = await catalog.createVisibilityRule({ ruleType: 'role', effect: 'allow', conditions: { role: 'admin' }, isActive: false });
    const composite = await catalog.createVisibilityRule({
      ruleType: 'composite', effect: 'allow', conditions: { orgId: 'acme', tier: { gte: 'teams' } }, description: 'acme teams+',
    });
    assert.deepEqual(composite.conditions, { orgIds: ['acme'], tier: { gte: 'teams' } });
    assert.equal(events.filter((e) => e.kind === 'rules').length, 6);

    assert.deepEqual((await catalog.listVisibilityRules()).map((r) => r.id), [page.id, deny.id, org.id, user.id, composite.id]);
    assert.equal((await catalog.listVisibilityRules({ includeInactive: true })).length, 6);
    assert.deepEqual((await catalog.listVisibilityRules({ includeInactive: 'true', ruleType: 'role' } as never)).map((r) => r.id), [role.id]);
    assert.deepEqual(await catalog.getVisibilityRule(role.id), role);
  });

  it('refuses conditions that do not fit the rule type, with paths under conditions', async () => {
    const wrongKind = await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'org', effect: 'allow', conditions: { userId: 'u1' } }),
      'invalid_input',
    );
    assert.ok(issuePaths(wrongKind).every((path) => path.startsWith('conditions')));
    const badTier = await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'tier', effect: 'allow', conditions: { tier: { gte: 'gold' } } }),
      'invalid_input',
    );
    assert.ok(issuePaths(badTier).includes('conditions.tier'), issuePaths(badTier).join());
    const typo = await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'user', effect: 'allow', conditions: { userIds: ['u'], orgid: 'x' } }),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(typo), ['conditions']);
    const structure = await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'geo', effect: 'maybe', conditions: {}, priority: 1.5 } as never),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(structure).sort(), ['effect', 'priority', 'ruleType']);
    const twoTargets = await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'org', effect: 'allow', toolId, categoryId, conditions: { orgId: 'a' } }),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(twoTargets), ['toolId']);
    await rejectsWithCode(
      catalog.createVisibilityRule({ ruleType: 'org', effect: 'allow', toolId: '00000000-0000-4000-8000-000000000000', conditions: { orgId: 'a' } }),
      'not_found',
    );
  });

  it('updates a rule, validating the merged result', async () => {
    const rule = await catalog.createVisibilityRule({ ruleType: 'org', effect: 'allow', conditions: { orgIds: ['a'] } });
    const denied = await catalog.updateVisibilityRule(rule.id, { effect: 'deny', priority: 3 });
    assert.equal(denied.effect, 'deny');
    assert.deepEqual(denied.conditions, { orgIds: ['a'] });
    await rejectsWithCode(catalog.updateVisibilityRule(rule.id, { ruleType: 'tier' }), 'invalid_input');
    const retyped = await catalog.updateVisibilityRule(rule.id, { ruleType: 'tier', conditions: { tier: 'teams' } });
    assert.deepEqual(retyped.conditions, { tier: { eq: 'teams' } });
    const retargeted = await catalog.updateVisibilityRule(rule.id, { categoryId });
    assert.equal(retargeted.categoryId, categoryId);
    await rejectsWithCode(catalog.updateVisibilityRule(rule.id, { toolId }), 'invalid_input');
    await rejectsWithCode(catalog.updateVisibilityRule('00000000-0000-4000-8000-000000000000', { priority: 1 }), 'not_found');
    await catalog.deleteVisibilityRule(rule.id);
    await rejectsWithCode(catalog.deleteVisibilityRule(rule.id), 'not_found');
    await rejectsWithCode(catalog.getVisibilityRule('nope'), 'not_found');
  });
});
