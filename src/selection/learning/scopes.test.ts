/**
 * The scope overlays keep what they built when nothing it is built from changed (issue #28): a
 * capture that only refreshed an example and a periodic re-read of the same rows keep the
 * overlay; a new text, a removed example or another replica's write build a new one. Every
 * backend.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { LEARNING_TOOLS } from '../../../test/learning/catalog-fixture.ts';
import type { Database } from '../../store/database.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { silentLogger } from '../../core/logger.ts';
import { writeLearnedExample, type LearnedExampleWrite } from '../../store/repositories/learned-examples.ts';
import { createScopeOverlays, type ScopeOverlays } from './scopes.ts';

const SCOPE = 'org:acme';
const CAPS = { perTool: 10, perContributor: 10 };

describeEachBackend('learned-example scope overlays (issue #28: no rebuild without a change)', (backend) => {
  let db: Database;
  let scopes: ScopeOverlays;
  let embedded = 0;
  let at = new Date('2026-01-01T00:00:00Z');
  const ids = new Map<string, string>();

  const example = (tool: string, text: string, contributor = 'ann'): LearnedExampleWrite => ({
    orgScope: SCOPE,
    toolId: ids.get(tool)!,
    text,
    textKey: text.toLowerCase(),
    contributor,
    source: 'gateway',
    at,
  });

  before(async () => {
    db = await backend.open();
    const catalog = createCatalogService({ db });
    await catalog.syncPlugin({ pluginId: 'kit', version: '1.0.0', tools: LEARNING_TOOLS.map((tool) => ({ ...tool })) });
    for (const tool of LEARNING_TOOLS) ids.set(tool.name, (await catalog.getToolByQualifiedName(`kit__${tool.name}`)).id);
    const offline = createOfflineEmbedder();
    const embedder = {
      ...offline,
      embed: (texts: string[]) => {
        embedded += texts.length;
        return offline.embed(texts);
      },
    };
    const scoring = { minSimilarity: 0.35, weight: 2, contributorShare: 0.34, lexicalWeight: 1, agreementShare: 1, agreementFloor: 0.9 };
    scopes = createScopeOverlays({ db, embedder, scoring, refreshMs: 60_000, now: () => at.getTime(), logger: silentLogger, schedule: (task) => void task(), calibrated: async () => {} });
    await writeLearnedExample(db, example('convert_currency', 'how many yen will my dollars buy'), CAPS);
    await writeLearnedExample(db, example('weather_forecast', 'will it rain in Paris'), CAPS);
    await scopes.reload(SCOPE);
  });
  after(async () => {
    await db.close();
  });

  it('keeps the overlay when a capture only refreshed an example', async () => {
    const built = scopes.current(SCOPE);
    assert.equal(built?.size, 2);
    at = new Date(at.getTime() + 1_000);
    // A repeat: the same row comes back with more hits and a later last-seen time.
    const repeat = await writeLearnedExample(db, example('convert_currency', 'how many yen will my dollars buy'), CAPS);
    assert.equal(repeat?.written.hits, 2);
    await scopes.apply(SCOPE, [repeat!.written], new Set(repeat!.removed));
    assert.equal(scopes.current(SCOPE), built, 'a refresh keeps the overlay object');
  });

  it('builds a new overlay for a new text and for a removed example, embedding only the new text', async () => {
    const before = scopes.current(SCOPE);
    const embeddedBefore = embedded;
    const added = await writeLearnedExample(db, example('convert_currency', 'exchange my euros into pounds', 'bob'), CAPS);
    await scopes.apply(SCOPE, [added!.written], new Set());
    const after = scopes.current(SCOPE);
    assert.notEqual(after, before);
    assert.equal(after?.size, 3);
    assert.equal(embedded - embeddedBefore, 1);
    await scopes.apply(SCOPE, [], new Set([added!.written.id]));
    assert.equal(scopes.current(SCOPE)?.size, 2);
    // An id the scope does not hold changes nothing.
    const held = scopes.current(SCOPE);
    await scopes.apply(SCOPE, [], new Set(['00000000-0000-0000-0000-000000000000']));
    assert.equal(scopes.current(SCOPE), held);
  });

  it('keeps the overlay when a re-read finds the same rows, and rebuilds when another writer changed them', async () => {
    // The database still holds the example removed from memory above: the re-read differs.
    await scopes.reload(SCOPE);
    const reread = scopes.current(SCOPE);
    assert.equal(reread?.size, 3);
    await scopes.reload(SCOPE);
    assert.equal(scopes.current(SCOPE), reread, 'the same rows keep the overlay');
    // Another replica's capture: a row this process never applied.
    await writeLearnedExample(db, example('send_email', 'mail the report to my boss', 'cy'), CAPS);
    await scopes.reload(SCOPE);
    assert.notEqual(scopes.current(SCOPE), reread);
    assert.equal(scopes.current(SCOPE)?.size, 4);
  });
});
