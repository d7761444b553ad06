import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createCatalogService, type CatalogChangeEvent, type CatalogService, type CategoryNode } from './index.ts';
import { issuePaths, rejectsWithCode } from './test-support.ts';

function shape(nodes: CategoryNode[]): unknown[] {
  return nodes.map((node) => (node.children.length === 0 ? node.name : { [node.name]: shape(node.children) }));
}

describeEachBackend('catalog categories and page mappings', (backend) => {
  let db: Database;
  let catalog: CatalogService;
  const events: CatalogChangeEvent[] = [];

  before(async () => {
    db = await backend.open();
    catalog = createCatalogService({ db, onChange: (event) => events.push(event) });
    await db.query("INSERT INTO plugins (name) VALUES ('crm')");
  });
  after(async () => {
    await db.close();
  });

  it('builds a tree with optional parents and lists it flat', async () => {
    const sales = await catalog.createCategory({ name: 'sales', displayName: 'Sales' });
    const deals = await catalog.createCategory({ name: 'deals', parentId: sales.id, pluginName: 'crm' });
    await catalog.createCategory({ name: 'forecast', parentId: deals.id, pluginName: 'crm' });
    await catalog.createCategory({ name: 'admin' });
    assert.equal(deals.parentId, sales.id);
    assert.equal(deals.pluginName, 'crm');
    assert.deepEqual(shape(await catalog.categoryTree()), ['admin', { sales: [{ deals: ['forecast'] }] }]);
    assert.deepEqual((await catalog.listCategories()).map((c) => c.name), ['admin', 'deals', 'forecast', 'sales']);
    assert.deepEqual((await catalog.listCategories({ pluginName: 'crm' })).map((c) => c.name), ['admin', 'deals', 'forecast', 'sales']);
    await rejectsWithCode(catalog.listCategories({ pluginName: 'ghost' }), 'not_found');
  });

  it('refuses duplicates per scope, unknown parents and bad names', async () => {
    await rejectsWithCode(catalog.createCategory({ name: 'sales' }), 'conflict');
    const sameNameOtherScope = await catalog.createCategory({ name: 'sales', pluginName: 'crm' });
    assert.equal(sameNameOtherScope.pluginName, 'crm');
    await catalog.deleteCategory(sameNameOtherScope.id);
    await rejectsWithCode(catalog.createCategory({ name: 'x', parentId: '00000000-0000-4000-8000-000000000000' }), 'not_found');
    const bad = await rejectsWithCode(catalog.createCategory({ name: ' padded', parentId: 'nope' }), 'invalid_input');
    assert.deepEqual(issuePaths(bad).sort(), ['name', 'parentId']);
  });

  it('re-parents, renames and refuses cycles', async () => {
    const all = await catalog.listCategories();
    const byName = (name: string) => all.find((c) => c.name === name && c.pluginName !== null)?.id ?? all.find((c) => c.name === name)!.id;
    const sales = byName('sales');
    const forecast = byName('forecast');
    const cycle = await rejectsWithCode(catalog.updateCategory(sales, { parentId: forecast }), 'invalid_input');
    assert.match(cycle.message, /cycle/);
    await rejectsWithCode(catalog.updateCategory(sales, { parentId: sales }), 'invalid_input');
    const moved = await catalog.updateCategory(forecast, { parentId: null, name: 'forecasting', displayName: 'Forecasting' });
    assert.equal(moved.parentId, null);
    assert.equal(moved.name, 'forecasting');
    const under = await catalog.updateCategory(sales, { parentId: forecast });
    assert.equal(under.parentId, forecast, 'no cycle any more once forecast left the subtree');
    await rejectsWithCode(catalog.updateCategory(sales, { name: 'admin' }), 'conflict');
    await rejectsWithCode(catalog.updateCategory('00000000-0000-4000-8000-000000000000', { name: 'x' }), 'not_found');
    await rejectsWithCode(catalog.updateCategory(sales, { colour: 'red' } as never), 'invalid_input');
  });

  it('creates, lists, updates and deletes page mappings', async () => {
    events.length = 0;
    const exact = await catalog.createPageMapping({ pagePattern: 'deals', category: 'deals', pluginName: 'crm', priority: 10 });
    assert.equal(exact.categoryName, 'deals');
    assert.equal(exact.pluginName, 'crm');
    const admin = (await catalog.listCategories()).find((c) => c.name === 'admin')!;
    const prefix = await catalog.createPageMapping({ pagePattern: 'deals*', categoryId: admin.id });
    const contains = await catalog.createPageMapping({ pagePattern: '*deal*', category: 'sales', priority: 20 });
    const suffix = await catalog.createPageMapping({ pagePattern: '*settings', category: 'admin', priority: 5 });
    assert.deepEqual(events.map((e) => e.kind), ['mappings', 'mappings', 'mappings', 'mappings']);
    assert.deepEqual((await catalog.listPageMappings()).map((m) => m.id), [contains.id, exact.id, suffix.id, prefix.id]);
    assert.deepEqual((await catalog.listPageMappings({ pluginName: 'crm' })).map((m) => m.id), [exact.id]);
    assert.deepEqual((await catalog.listPageMappings({ categoryId: admin.id })).map((m) => m.id), [suffix.id, prefix.id]);

    await rejectsWithCode(catalog.createPageMapping({ pagePattern: 'deals', category: 'deals', pluginName: 'crm' }), 'conflict');
    await rejectsWithCode(catalog.createPageMapping({ pagePattern: 'de*als', category: 'deals' }), 'invalid_input');
    await rejectsWithCode(catalog.createPageMapping({ pagePattern: 'x', category: 'ghost' }), 'not_found');
    await rejectsWithCode(catalog.createPageMapping({ pagePattern: 'x', categoryId: admin.id, category: 'admin' }), 'invalid_input');
    await rejectsWithCode(catalog.createPageMapping({ pagePattern: 'x' }), 'invalid_input');

    const updated = await catalog.updatePageMapping(prefix.id, { priority: 1, pagePattern: 'deals/*' });
    assert.equal(updated.priority, 1);
    assert.equal(updated.pagePattern, 'deals/*');
    await rejectsWithCode(catalog.updatePageMapping(prefix.id, { pagePattern: '**' }), 'invalid_input');
    await rejectsWithCode(catalog.getPageMapping('00000000-0000-4000-8000-000000000000'), 'not_found');
    const temp = await catalog.createPageMapping({ pagePattern: 'tmp', category: 'admin' });
    await catalog.deletePageMapping(temp.id);
    await rejectsWithCode(catalog.deletePageMapping(temp.id), 'not_found');
  });

  it('resolves the categories of a page by the four modes and priority', async () => {
    const forPage = async (page: string, pluginName?: string) =>
      (await catalog.categoriesForPage(page, pluginName === undefined ? {} : { pluginName })).map((m) => `${m.categoryName}:${m.mode}:${m.priority}`);
    assert.deepEqual(await forPage('deals'), ['sales:contains:20', 'deals:exact:10']);
    assert.deepEqual(await forPage('deals/42'), ['sales:contains:20', 'admin:prefix:1']);
    assert.deepEqual(await forPage('org/settings'), ['admin:suffix:5']);
    assert.deepEqual(await forPage('contacts'), []);
    assert.deepEqual(await forPage('deals', 'crm'), ['sales:contains:20', 'deals:exact:10']);
    await rejectsWithCode(catalog.categoriesForPage(''), 'invalid_input');
  });

  it('deleting a category detaches children and tools and drops its mappings', async () => {
    const tool = await catalog.createTool({ name: 'list_deals', pluginName: 'crm', category: 'deals' });
    const deals = (await catalog.getTool(tool.id)).categoryId!;
    const admin = (await catalog.listCategories()).find((c) => c.name === 'admin')!;
    await catalog.updateCategory(admin.id, { parentId: deals });
    events.length = 0;
    await catalog.deleteCategory(deals);
    assert.deepEqual(events.map((e) => e.kind), ['categories', 'mappings', 'tools']);
    assert.equal((await catalog.getTool(tool.id)).categoryId, null);
    assert.equal((await catalog.getCategory(admin.id)).parentId, null);
    assert.deepEqual(await catalog.listPageMappings({ pluginName: 'crm' }), []);
    await rejectsWithCode(catalog.deleteCategory(deals), 'not_found');
    await rejectsWithCode(catalog.getCategory('bad'), 'not_found');
  });
});
