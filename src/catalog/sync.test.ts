import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createCatalogService, type CatalogChangeEvent, type CatalogService, type SyncPayload } from './index.ts';
import { issuePaths, rejectsWithCode } from './test-support.ts';

type SyncTool = SyncPayload['tools'][number];

function tool(name: string, extra: Partial<SyncTool> = {}): SyncTool {
  return { name, description: `The ${name} tool`, parameters: { type: 'object', properties: { id: { type: 'string' } } }, ...extra };
}

function payload(version: string, tools: SyncTool[], extra: Partial<SyncPayload> = {}): SyncPayload {
  return {
    pluginId: 'nexus-ros',
    version,
    tools,
    categories: [{ name: 'crm', description: 'CRM' }, { name: 'deals', parent: 'crm' }],
    pageMappings: [{ pagePattern: 'deals*', category: 'deals', priority: 10 }, { pagePattern: '*contact*', category: 'crm' }],
    ...extra,
  };
}

async function counts(db: Database): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, number>>(`SELECT
    (SELECT count(*) FROM plugins) AS plugins, (SELECT count(*) FROM tools) AS tools,
    (SELECT count(*) FROM tool_versions) AS versions, (SELECT count(*) FROM tool_categories) AS categories,
    (SELECT count(*) FROM tool_page_mappings) AS mappings`);
  return rows[0]!;
}

describeEachBackend('catalog plugin sync (seed 001 §9)', (backend) => {
  let db: Database;
  let catalog: CatalogService;
  const events: CatalogChangeEvent[] = [];

  before(async () => {
    db = await backend.open();
    catalog = createCatalogService({ db, onChange: (event) => events.push(event) });
  });
  after(async () => {
    await db.close();
  });

  it('refuses a bad payload without creating anything', async () => {
    const empty = await counts(db);
    const bad = await rejectsWithCode(
      catalog.syncPlugin(payload('1.0.0', [tool('good'), tool('bad__name'), { name: 'x', pinWeight: 'high' } as never])),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(bad).sort(), ['tools.1.name', 'tools.2.pinWeight']);
    assert.match(bad.message, /separator "__"/);
    const twice = await rejectsWithCode(catalog.syncPlugin(payload('1.0.0', [tool('a'), tool('b'), tool('a')])), 'invalid_input');
    assert.deepEqual(issuePaths(twice), ['tools.2.name']);
    await rejectsWithCode(catalog.syncPlugin({ ...payload('1.0.0', []), pluginId: 'Bad_Plugin' }), 'invalid_input');
    const dupes = await rejectsWithCode(
      catalog.syncPlugin(payload('1.0.0', [], {
        categories: [{ name: 'a' }, { name: 'a' }],
        pageMappings: [{ pagePattern: 'p', category: 'a' }, { pagePattern: 'p', category: 'a', priority: 2 }],
      })),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(dupes).sort(), ['categories.1.name', 'pageMappings.1.pagePattern']);
    // Unknown category names are found inside the transaction, after the plugin row was written: all rolled back.
    const unknown = await rejectsWithCode(
      catalog.syncPlugin(payload('1.0.0', [tool('a', { category: 'ghost' })], { pageMappings: [{ pagePattern: 'x', category: 'nowhere' }] })),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(unknown), ['tools.0.category', 'pageMappings.0.category']);
    const cyclic = await rejectsWithCode(
      catalog.syncPlugin(payload('1.0.0', [], { categories: [{ name: 'a', parent: 'b' }, { name: 'b', parent: 'a' }], pageMappings: [] })),
      'invalid_input',
    );
    assert.deepEqual(issuePaths(cyclic), ['categories.0.parent', 'categories.1.parent']);
    assert.deepEqual(await counts(db), empty);
  });

  it('first sync creates the plugin, categories, mappings and tools at version 1', async () => {
    events.length = 0;
    const report = await catalog.syncPlugin(payload('1.0.0', [
      tool('list_contacts', { category: 'crm' }),
      tool('list_deals', { category: 'deals', schemaVersion: '1.2.0' }),
      tool('forecast', { category: 'deals' }),
      tool('health'),
    ]));
    assert.equal(report.pluginCreated, true);
    assert.deepEqual(report.inserted, ['list_contacts', 'list_deals', 'forecast', 'health']);
    assert.deepEqual([report.updated, report.deleted, report.revived, report.markedStale], [[], [], [], []]);
    assert.deepEqual(report.categoriesWritten, ['crm', 'deals']);
    assert.equal(report.mappingsWritten, 2);
    assert.ok(report.durationMs > 0);
    assert.deepEqual(events.map((e) => e.kind), ['tools', 'categories', 'mappings']);

    const deals = await catalog.getToolByQualifiedName('nexus-ros__list_deals');
    assert.equal(deals.categoryName, 'deals');
    assert.equal(deals.embeddingStatus, 'pending');
    assert.equal(deals.version, 1);
    const versions = await catalog.listToolVersions(deals.id);
    assert.equal(versions[0]?.changeReason, 'plugin sync 1.0.0');
    assert.equal(versions[0]?.createdBy, 'plugin:nexus-ros');
    const { rows } = await db.query<{ source_type: string; version: string }>("SELECT source_type, version FROM plugins WHERE name = 'nexus-ros'");
    assert.deepEqual(rows[0], { source_type: 'sync', version: '1.0.0' });
    const tree = await catalog.categoryTree({ pluginName: 'nexus-ros' });
    assert.deepEqual(tree.map((n) => [n.name, n.children.map((c) => c.name)]), [['crm', ['deals']]]);
    assert.deepEqual((await catalog.categoriesForPage('deals/pipeline')).map((m) => m.categoryName), ['deals']);
  });

  it('an identical re-sync changes nothing', async () => {
    events.length = 0;
    const before = await counts(db);
    const report = await catalog.syncPlugin(payload('1.0.0', [
      tool('list_contacts', { category: 'crm' }),
      tool('list_deals', { category: 'deals', schemaVersion: '1.2.0' }),
      tool('forecast', { category: 'deals' }),
      tool('health'),
    ]));
    assert.equal(report.pluginCreated, false);
    assert.equal(report.unchanged, 4);
    assert.deepEqual([report.inserted, report.updated, report.deleted, report.categoriesWritten], [[], [], [], []]);
    assert.equal(report.mappingsWritten, 0);
    assert.deepEqual(events, []);
    assert.deepEqual(await counts(db), before);
  });

  it('updates changed tools (stale only on content), flags major bumps, inserts new and soft-deletes missing', async () => {
    await db.query("UPDATE tools SET embedding_status = 'current'");
    const report = await catalog.syncPlugin(payload('1.1.0', [
      tool('list_contacts', { category: 'crm', description: 'List contacts, now with filters' }),
      tool('list_deals', { category: 'crm', pinWeight: 5, schemaVersion: '2.0.0' }),
      tool('health'),
      tool('new_tool'),
    ], { pageMappings: [{ pagePattern: 'deals*', category: 'deals', priority: 20 }, { pagePattern: '*contact*', category: 'crm' }] }));
    assert.deepEqual(report.inserted, ['new_tool']);
    assert.deepEqual(report.updated, ['list_contacts', 'list_deals']);
    assert.deepEqual(report.markedStale, ['list_contacts']);
    assert.deepEqual(report.needsReview, ['list_deals']);
    assert.deepEqual(report.deleted, ['forecast']);
    assert.equal(report.unchanged, 1);
    assert.equal(report.mappingsWritten, 1);

    const contacts = await catalog.getToolByQualifiedName('nexus-ros__list_contacts');
    assert.equal(contacts.embeddingStatus, 'stale');
    assert.equal(contacts.version, 2);
    assert.deepEqual((await catalog.listToolVersions(contacts.id))[0]?.changedFields, ['description']);

    const deals = await catalog.getToolByQualifiedName('nexus-ros__list_deals');
    assert.equal(deals.embeddingStatus, 'current', 'category/pin/schemaVersion are not content');
    assert.equal(deals.needsReview, true);
    assert.equal(deals.categoryName, 'crm');
    assert.deepEqual((await catalog.listToolVersions(deals.id))[0]?.changedFields, ['categoryId', 'pinWeight', 'schemaVersion']);

    const forecast = await catalog.getToolByQualifiedName('nexus-ros__forecast', { includeDeleted: true });
    assert.ok(forecast.deletedAt instanceof Date);
    assert.equal((await catalog.listToolVersions(forecast.id))[0]?.changeReason, 'missing from plugin sync 1.1.0');
    assert.equal((await catalog.listPageMappings({ pluginName: 'nexus-ros' }))[0]?.priority, 20);
  });

  it('revives a soft-deleted tool that reappears, and a minor bump does not flag review', async () => {
    const report = await catalog.syncPlugin(payload('1.2.0', [
      tool('list_contacts', { category: 'crm', description: 'List contacts, now with filters' }),
      tool('list_deals', { category: 'crm', pinWeight: 5, schemaVersion: '2.1.0' }),
      tool('health'),
      tool('new_tool'),
      tool('forecast', { category: 'deals' }),
    ]));
    assert.deepEqual(report.revived, ['forecast']);
    assert.deepEqual(report.updated, ['list_deals']);
    assert.deepEqual(report.needsReview, []);
    assert.deepEqual(report.markedStale, []);
    const forecast = await catalog.getToolByQualifiedName('nexus-ros__forecast');
    assert.equal(forecast.deletedAt, null);
    assert.equal(forecast.version, 3);
    assert.deepEqual((await catalog.listToolVersions(forecast.id))[0]?.changedFields, ['deletedAt']);
  });
});
