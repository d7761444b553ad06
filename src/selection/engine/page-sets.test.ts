import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { silentLogger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { insertPageMapping, listPageMappings, updatePageMapping } from '../../store/repositories/page-mappings.ts';
import { createLexicalRetrieval } from '../retrieval.ts';
import { seedFixture, slowAnswers, type Fixture } from '../test-fixtures.ts';
import { createCatalogState } from './catalog.ts';
import { createPageSets } from './page-sets.ts';
import type { VisibleSet } from './types.ts';

describeEachBackend('selection page sets', (backend) => {
  let db: Database;
  let fixture: Fixture;
  let visible: VisibleSet;
  before(async () => {
    db = await backend.open();
    fixture = await seedFixture(db);
    const catalog = createCatalogState({ db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: Date.now, onReload: () => {} });
    visible = { tools: (await catalog.get()).tools, pins: [], catalogTokens: new Map() };
  });
  after(async () => {
    await db?.close();
  });

  it('a mappings read begun before an invalidation is not kept: the next caller sees the change, not the old mappings until their TTL', async () => {
    const slow = slowAnswers(db, 0);
    const pageSets = createPageSets({ db: slow.db, logger: silentLogger, now: Date.now, ttl: { policyMs: 60_000, mappingsMs: 60_000 } });
    const names = (set: { ordered: Array<{ name: string }> }) => set.ordered.map((tool) => tool.name).sort();
    // A selection on page 'contacts' reads the mappings (read, answer held back).
    const early = pageSets.get('visible', visible, 'contacts');
    await slow.answered;
    // Meanwhile the page is mapped to deals instead, a new page 'leads' is mapped, and the caches are told.
    const contacts = (await listPageMappings(db)).find((mapping) => mapping.pagePattern === 'contacts')!;
    await updatePageMapping(db, contacts.id, { pagePattern: 'contacts', categoryId: fixture.categories.deals, priority: 10 }, new Date());
    await insertPageMapping(db, { pagePattern: 'leads', categoryId: fixture.categories.contacts, pluginId: null, priority: 1 }, new Date());
    pageSets.invalidate('mappings');
    slow.release();
    // The early caller read before the change; it may answer with what it read.
    assert.deepEqual(names(await early), ['create_contact', 'list_contacts']);
    // Callers after the invalidation see the change (same page: page set and category caches; new page: the mappings list).
    assert.deepEqual(names(await pageSets.get('visible', visible, 'contacts')), ['forecast_pipeline', 'list_deals'], 'the page set read before the change was kept');
    const leads = await pageSets.get('visible', visible, 'leads');
    assert.equal(leads.filtered, true, 'the mappings list read before the change was kept');
    assert.deepEqual(names(leads), ['create_contact', 'list_contacts']);
  });
});
