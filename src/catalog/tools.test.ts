import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createCatalogService, type CatalogChangeEvent, type CatalogService } from './index.ts';
import { issuePaths, rejectsWithCode } from './test-support.ts';

describeEachBackend('catalog tools', (backend) => {
  let db: Database;
  let catalog: CatalogService;
  const events: CatalogChangeEvent[] = [];

  before(async () => {
    db = await backend.open();
    catalog = createCatalogService({ db, onChange: (event) => events.push(event) });
    await db.query("INSERT INTO plugins (name) VALUES ('crm'), ('docs')");
    await catalog.createCategory({ name: 'contacts', pluginName: 'crm' });
    await catalog.createCategory({ name: 'search' });
  });
  after(async () => {
    await db.close();
  });

  it('creates a plugin tool at version 1 with joined names, pending embedding and a v1 row', async () => {
    events.length = 0;
    const tool = await catalog.createTool({
      name: 'list_contacts',
      pluginName: 'crm',
      description: 'List CRM contacts',
      category: 'contacts',
      tags: ['crm'],
      exampleQueries: ['show my contacts'],
    });
    assert.equal(tool.qualifiedName, 'crm__list_contacts');
    assert.equal(tool.pluginName, 'crm');
    assert.equal(tool.categoryName, 'contacts');
    assert.equal(tool.version, 1);
    assert.equal(tool.embeddingStatus, 'pending');
    assert.match(tool.contentHash, /^[0-9a-f]{64}$/);
    assert.deepEqual(tool.parameters, { type: 'object' });
    const versions = await catalog.listToolVersions(tool.id);
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.version, 1);
    assert.equal(versions[0]?.changeReason, 'created');
    assert.equal(versions[0]?.snapshot.categoryName, 'contacts');
    assert.deepEqual(events, [{ kind: 'tools', ids: [tool.id] }]);
  });

  it('creates a global tool whose qualified name is its bare name', async () => {
    const tool = await catalog.createTool({ name: 'web_search', description: 'Search the web', category: 'search' });
    assert.equal(tool.qualifiedName, 'web_search');
    assert.equal(tool.pluginId, null);
    assert.equal((await catalog.getToolByQualifiedName('web_search')).id, tool.id);
  });

  it('gets tools by id and qualified name, and says not_found otherwise', async () => {
    const tool = await catalog.getToolByQualifiedName('crm__list_contacts');
    assert.equal((await catalog.getTool(tool.id)).name, 'list_contacts');
    await rejectsWithCode(catalog.getTool('00000000-0000-4000-8000-000000000000'), 'not_found');
    await rejectsWithCode(catalog.getTool('not-a-uuid'), 'not_found');
    await rejectsWithCode(catalog.getToolByQualifiedName('crm__nope'), 'not_found');
    await rejectsWithCode(catalog.getToolByQualifiedName('ghost__list_contacts'), 'not_found');
    await rejectsWithCode(catalog.getToolByQualifiedName('not a name!'), 'not_found');
  });

  it('refuses bad input with every issue listed, unknown plugins and categories, and duplicates', async () => {
    const bad = await rejectsWithCode(catalog.createTool({ name: 'a__b', pinWeight: 1.5, bogus: true } as never), 'invalid_input');
    assert.ok(issuePaths(bad).includes('name'));
    assert.ok(issuePaths(bad).includes('pinWeight'));
    assert.ok(issuePaths(bad).includes('(root)'));
    await rejectsWithCode(catalog.createTool({ name: 'x', pluginName: 'ghost' }), 'not_found');
    await rejectsWithCode(catalog.createTool({ name: 'x', category: 'ghost' }), 'not_found');
    await rejectsWithCode(catalog.createTool({ name: 'list_contacts', pluginName: 'crm' }), 'conflict');
  });

  it('lists with filters, search and paging', async () => {
    await catalog.createTool({ name: 'create_contact', pluginName: 'crm', category: 'contacts', status: 'draft', description: 'Create a contact record' });
    await catalog.createTool({ name: 'read_page', pluginName: 'docs', description: 'Read one documentation page' });
    const all = await catalog.listTools();
    assert.equal(all.total, 4);
    assert.deepEqual(all.items.map((t) => t.qualifiedName), ['web_search', 'crm__create_contact', 'crm__list_contacts', 'docs__read_page']);
    assert.equal((await catalog.listTools({ pluginName: 'crm' })).total, 2);
    const crm = await catalog.getToolByQualifiedName('crm__list_contacts');
    assert.equal((await catalog.listTools({ pluginId: crm.pluginId! })).total, 2);
    assert.equal((await catalog.listTools({ category: 'contacts' })).total, 2);
    assert.equal((await catalog.listTools({ categoryId: crm.categoryId! })).total, 2);
    assert.deepEqual((await catalog.listTools({ status: 'draft' })).items.map((t) => t.name), ['create_contact']);
    assert.deepEqual((await catalog.listTools({ search: 'DOCUMENTATION' })).items.map((t) => t.name), ['read_page']);
    assert.equal((await catalog.listTools({ search: '100%_' })).total, 0);
    const page = await catalog.listTools({ limit: '2', offset: '1' } as never);
    assert.deepEqual(page.items.map((t) => t.qualifiedName), ['crm__create_contact', 'crm__list_contacts']);
    assert.equal(page.total, 4);
    assert.equal(page.limit, 2);
    const tooMany = await rejectsWithCode(catalog.listTools({ limit: 10_000 }), 'invalid_input');
    assert.deepEqual(issuePaths(tooMany), ['limit']);
    await rejectsWithCode(catalog.listTools({ pluginId: 'nope' }), 'invalid_input');
  });

  it('updates as a new version listing the changed fields, marking stale only on a content change', async () => {
    const tool = await catalog.getToolByQualifiedName('crm__list_contacts');
    await db.query("UPDATE tools SET embedding_status = 'current' WHERE id = $1", [tool.id]);
    events.length = 0;

    const pinned = await catalog.updateTool(tool.id, { pinWeight: 10, isAlwaysPinned: true, changeReason: 'pin it', changedBy: 'admin' });
    assert.equal(pinned.version, 2);
    assert.equal(pinned.contentHash, tool.contentHash);
    assert.equal(pinned.embeddingStatus, 'current');

    const described = await catalog.updateTool(tool.id, { description: 'List every CRM contact', category: null });
    assert.equal(described.version, 3);
    assert.notEqual(described.contentHash, tool.contentHash);
    assert.equal(described.embeddingStatus, 'stale');
    assert.equal(described.categoryId, null);

    const versions = await catalog.listToolVersions(tool.id);
    assert.deepEqual(versions.map((v) => v.version), [3, 2, 1]);
    assert.deepEqual(versions[1]?.changedFields, ['isAlwaysPinned', 'pinWeight']);
    assert.equal(versions[1]?.changeReason, 'pin it');
    assert.equal(versions[1]?.createdBy, 'admin');
    assert.deepEqual(versions[0]?.changedFields, ['categoryId', 'description']);
    assert.equal(versions[0]?.contentHash, described.contentHash);
    assert.equal(events.length, 2);

    const same = await catalog.updateTool(tool.id, { description: 'List every CRM contact' });
    assert.equal(same.version, 3, 'a patch that changes nothing writes no version');
    const reviewed = await catalog.updateTool(tool.id, { needsReview: true });
    assert.equal(reviewed.needsReview, true);
    assert.deepEqual((await catalog.listToolVersions(tool.id))[0]?.changedFields, ['needsReview']);
  });

  it('refuses bad patches, unknown tools and renames onto an existing name', async () => {
    const tool = await catalog.getToolByQualifiedName('crm__list_contacts');
    await rejectsWithCode(catalog.updateTool(tool.id, {}), 'invalid_input');
    const bad = await rejectsWithCode(catalog.updateTool(tool.id, { status: 'gone', tags: 'x' } as never), 'invalid_input');
    assert.deepEqual(issuePaths(bad).sort(), ['status', 'tags']);
    await rejectsWithCode(catalog.updateTool(tool.id, { pluginName: 'docs' } as never), 'invalid_input');
    await rejectsWithCode(catalog.updateTool('00000000-0000-4000-8000-000000000000', { pinWeight: 1 }), 'not_found');
    await rejectsWithCode(catalog.updateTool(tool.id, { category: 'ghost' }), 'not_found');
    await rejectsWithCode(catalog.updateTool(tool.id, { name: 'create_contact' }), 'conflict');
    assert.equal((await catalog.getTool(tool.id)).name, 'list_contacts');
  });

  it('rolls back to any version as a new version, never rewriting history', async () => {
    const tool = await catalog.getToolByQualifiedName('crm__list_contacts');
    const before = await catalog.listToolVersions(tool.id);
    const rolled = await catalog.rollbackTool(tool.id, { version: 1, changeReason: 'bad edit' });
    assert.equal(rolled.version, tool.version + 1);
    assert.equal(rolled.description, 'List CRM contacts');
    assert.equal(rolled.categoryName, 'contacts');
    assert.equal(rolled.pinWeight, 0);
    assert.equal(rolled.isAlwaysPinned, false);
    const v1 = before.find((v) => v.version === 1)!;
    assert.equal(rolled.contentHash, v1.contentHash);
    assert.equal(rolled.embeddingStatus, 'stale');
    const after = await catalog.listToolVersions(tool.id);
    assert.equal(after.length, before.length + 1);
    assert.deepEqual(after.slice(1), before, 'earlier versions are untouched');
    assert.equal(after[0]?.changeReason, 'rollback to version 1: bad edit');
    assert.deepEqual(after[0]?.changedFields, ['categoryId', 'description', 'isAlwaysPinned', 'pinWeight']);

    const again = await catalog.rollbackTool(tool.id, { version: rolled.version });
    assert.equal(again.version, rolled.version, 'rolling back to the current state writes nothing');
    await rejectsWithCode(catalog.rollbackTool(tool.id, { version: 99 }), 'not_found');
    await rejectsWithCode(catalog.rollbackTool(tool.id, { version: 0 }), 'invalid_input');
    await rejectsWithCode(catalog.rollbackTool('00000000-0000-4000-8000-000000000000', { version: 1 }), 'not_found');
  });

  it('soft-deletes as a version, hides the tool from lists, and revives it by rollback or re-creation', async () => {
    const tool = await catalog.createTool({ name: 'temp_tool', pluginName: 'docs' });
    const deleted = await catalog.deleteTool(tool.id, { changeReason: 'retired' });
    assert.ok(deleted.deletedAt instanceof Date);
    assert.equal(deleted.version, 2);
    const versions = await catalog.listToolVersions(tool.id);
    assert.deepEqual(versions[0]?.changedFields, ['deletedAt']);
    assert.equal(versions[0]?.changeReason, 'retired');
    assert.equal(typeof versions[0]?.snapshot.deletedAt, 'string');
    assert.equal((await catalog.listTools({ pluginName: 'docs' })).total, 1);
    assert.equal((await catalog.listTools({ pluginName: 'docs', includeDeleted: true })).total, 2);
    await rejectsWithCode(catalog.getToolByQualifiedName('docs__temp_tool'), 'not_found');
    assert.equal((await catalog.getToolByQualifiedName('docs__temp_tool', { includeDeleted: true })).id, tool.id);
    await rejectsWithCode(catalog.deleteTool(tool.id), 'not_found');
    await rejectsWithCode(catalog.updateTool(tool.id, { pinWeight: 3 }), 'conflict');

    const revived = await catalog.rollbackTool(tool.id, { version: 1 });
    assert.equal(revived.deletedAt, null);
    assert.equal(revived.version, 3);
    assert.deepEqual((await catalog.listToolVersions(tool.id))[0]?.changedFields, ['deletedAt']);

    await catalog.deleteTool(tool.id);
    const recreated = await catalog.createTool({ name: 'temp_tool', pluginName: 'docs', description: 'back again' });
    assert.equal(recreated.id, tool.id);
    assert.equal(recreated.deletedAt, null);
    assert.equal(recreated.version, 5);
    assert.deepEqual((await catalog.listToolVersions(tool.id))[0]?.changedFields, ['description', 'deletedAt']);
  });

  it('keeps a write committed when a change subscriber throws', async () => {
    const warnings: string[] = [];
    const noisy = createCatalogService({
      db,
      onChange: () => {
        throw new Error('subscriber bug');
      },
      logger: { warn: (_details, message) => warnings.push(message) },
    });
    const tool = await noisy.createTool({ name: 'noisy_tool' });
    assert.equal((await catalog.getTool(tool.id)).name, 'noisy_tool');
    assert.equal(warnings.length, 1);
  });
});
