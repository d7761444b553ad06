import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import { openStore } from '../store/open.ts';
import type { Database, Queryable } from '../store/database.ts';
import { isQuiverError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { setEnablement } from '../store/repositories/enablement.ts';
import { createSelectionEngine, type SelectionEngine, type SelectionEngineOptions } from './engine.ts';
import { createSeededRandom } from './random.ts';
import { notifyCatalogChanged } from './invalidation.ts';
import { addRule, addTool, faultyDatabase, seedFixture, type Fixture } from './test-fixtures.ts';
import { createLexicalRetrieval } from './retrieval.ts';
import { writeEventOutcomesWithArms } from '../store/repositories/selection-outcomes.ts';
import { createRetrievalIndex } from '../retrieval/retrieval-index.ts';

function recordingLogger(): Logger & { errors: unknown[]; warnings: unknown[] } {
  const logger = {
    errors: [] as unknown[],
    warnings: [] as unknown[],
    debug() {},
    info() {},
    warn(context: object) {
      logger.warnings.push(context);
    },
    error(context: object) {
      logger.errors.push(context);
    },
    child() {
      return logger;
    },
  };
  return logger;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

const names = (result: { tools: Array<{ qualifiedName: string }> }) => result.tools.map((tool) => tool.qualifiedName);

describeEachBackend('selection engine', (backend) => {
  let db: Database;
  let fixture: Fixture;
  let engines: SelectionEngine[] = [];
  const engine = (options: Partial<SelectionEngineOptions> = {}) => {
    const created = createSelectionEngine({ db, random: createSeededRandom(1), events: { flushMs: 5 }, ...options });
    engines.push(created);
    return created;
  };

  before(async () => {
    db = await backend.open();
    fixture = await seedFixture(db);
  });
  after(async () => {
    for (const created of engines) await created.close();
    await db.close();
  });
  beforeEach(async () => {
    for (const created of engines) await created.close();
    engines = [];
  });

  describe('pipeline', () => {
    it('checks a frozen visibleTools context once, and a mutable one on every call (issue #28)', async () => {
      const selection = engine();
      let reads = 0;
      // The schema reads each field of the context it checks: a counting getter shows each check.
      const frozen = Object.freeze(
        Object.defineProperty({ workspace: 'default', roles: Object.freeze(['dev']) as string[] }, 'sessionId', { enumerable: true, get: () => (reads++, 'session-1') }),
      );
      const first = await selection.visibleTools(frozen);
      const checks = reads;
      assert.ok(checks > 0, 'the first call checks the context');
      const ids = (visible: { tools: readonly { id: string }[] }) => visible.tools.map((tool) => tool.id);
      assert.deepEqual(ids(await selection.visibleTools(frozen)), ids(first));
      assert.equal(reads, checks, 'a frozen context is not checked again');
      // A context that can change is checked every time: a bad value is refused, never served from an earlier check.
      const mutable: { workspace: string; sessionId?: string } = { workspace: 'default' };
      await selection.visibleTools(mutable);
      mutable.sessionId = '';
      await assert.rejects(selection.visibleTools(mutable), (error: unknown) => isQuiverError(error) && error.code === 'invalid_input');
      await assert.rejects(selection.visibleTools(Object.freeze({ workspace: 'default', sessionId: '' })), (error: unknown) => isQuiverError(error) && error.code === 'invalid_input');
    });

    it('retrieves relevant tools, prepends pins by weight and reports tokens', async () => {
      const result = await engine().selectTools({ query: 'open a new github issue for this bug', k: 3 });
      assert.deepEqual(names(result).slice(0, 2), ['search_tools', 'health']);
      assert.deepEqual(result.tools.slice(0, 2).map((t) => t.reason), ['pinned', 'pinned']);
      assert.ok(names(result).includes('github__create_issue'), names(result).join(','));
      assert.equal(result.tools.length, 5, 'k = 3 plus two pins');
      assert.equal(result.schemas.length, 5);
      assert.deepEqual(Object.keys(result.schemas[2] as object), ['type', 'function']);
      const { tokens } = result.metadata;
      assert.equal(tokens.sent, result.tools.reduce((sum, tool) => sum + tool.tokens, 0));
      assert.ok(tokens.catalog > tokens.sent && tokens.saved === tokens.catalog - tokens.sent);
      assert.equal(tokens.tokenizer, 'o200k_base');
      assert.equal(result.metadata.contextKey, 'any:any:general');
      assert.equal(result.metadata.candidateCount, 9, '7 plugin tools + 2 pins; no org-private, no disabled plugin');
      assert.match(result.metadata.method, /^policy\+lexical\+thompson\+pins$/);
      assert.ok(result.metadata.eventId);
      // Every stage reports its time, and the total covers the stages (timings, so no exact values).
      const timings = result.metadata.stageTimingsMs;
      const stages = (['policy', 'candidates', 'context', 'retrieval', 'bandit', 'pins'] as const).map((key) => timings[key]);
      assert.ok(stages.every((ms) => typeof ms === 'number' && Number.isFinite(ms)), JSON.stringify(timings));
      assert.ok(timings.total + 1e-6 >= Math.max(...stages), JSON.stringify(timings));
    });

    it('fills k from the tools a caller may be offered when some are excluded, pins included, and logs only those', async () => {
      const selection = engine();
      const full = await selection.selectTools({ query: 'open a new github issue for this bug', k: 3 });
      const ranked = full.tools.filter((tool) => tool.reason !== 'pinned');
      const excluded = [ranked[0]!, full.tools.find((tool) => tool.qualifiedName === 'health')!];
      const exclude = new Set(excluded.map((tool) => tool.id));
      const narrowed = await selection.selectTools({ query: 'open a new github issue for this bug', k: 3 }, { exclude });
      assert.deepEqual(names(narrowed).filter((name) => excluded.some((tool) => tool.qualifiedName === name)), []);
      assert.equal(narrowed.tools.length, 4, 'k = 3 from the rest plus the one pin left');
      assert.deepEqual(names(narrowed).slice(0, 2), ['search_tools', ranked[1]!.qualifiedName]);
      await selection.flush();
      const { rows } = await db.query<{ selected_tool_ids: string[] }>('SELECT selected_tool_ids FROM tool_selection_events WHERE id = $1', [narrowed.metadata.eventId]);
      assert.deepEqual(rows[0]?.selected_tool_ids, narrowed.tools.map((tool) => tool.id));
      // A long exclusion list (an expert allow-list in a large catalog) narrows the candidates instead: same answer.
      const many = new Set([...exclude, ...Array.from({ length: 100 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)]);
      const narrowedByMany = await selection.selectTools({ query: 'open a new github issue for this bug', k: 3 }, { exclude: many });
      assert.equal(narrowedByMany.tools.length, 4);
      assert.deepEqual(names(narrowedByMany).filter((name) => excluded.some((tool) => tool.qualifiedName === name)), []);
      // The matching tools rank the same; the tail is tools the query does not match, in either order.
      assert.deepEqual(names(narrowedByMany).slice(0, 3), names(narrowed).slice(0, 3));
    });

    it('never returns tools of plugins not enabled in the workspace, and errors on an unknown workspace', async () => {
      const selection = engine();
      const result = await selection.selectTools({ query: 'export every secret record leak data', k: 10 });
      assert.ok(!names(result).includes('secret-plugin__leak_data'));
      const other = await selection.selectTools({ query: 'github issue contacts deals', k: 10, context: { workspace: 'team-b' } });
      assert.deepEqual(names(other).sort(), ['health', 'search_tools']);
      await assert.rejects(selection.selectTools({ query: 'x', context: { workspace: 'nope' } }), (error) => isQuiverError(error, 'not_found'));
      await assert.rejects(selection.selectTools({ query: 'x', context: { project: 'nope' } }), (error) => isQuiverError(error, 'not_found'));
      await assert.rejects(
        selection.selectTools({ query: 'x' }, { binding: { workspaceId: fixture.otherWorkspaceId } }),
        (error) => isQuiverError(error, 'forbidden'),
      );
    });

    it('honours project opt-out of a workspace-wide plugin', async () => {
      const { rows } = await db.query<{ id: string }>(`INSERT INTO projects (workspace_id, name) VALUES ($1, 'mobile') RETURNING id`, [fixture.workspaceId]);
      await setEnablement(db, { pluginId: fixture.plugins.github, workspaceId: fixture.workspaceId, projectId: rows[0]!.id, enabled: false });
      const result = await engine().selectTools({ query: 'github issue', k: 10, context: { project: 'mobile' } });
      assert.ok(!names(result).some((name) => name.startsWith('github__')), names(result).join(','));
      const whole = await engine().selectTools({ query: 'github issue', k: 10 });
      assert.ok(names(whole).some((name) => name.startsWith('github__')));
    });

    it('shows organisation-private tools only to their organisation', async () => {
      const selection = engine();
      const acme = await selection.selectTools({ query: 'quarterly revenue report', k: 10, context: { orgId: 'acme' } });
      assert.ok(names(acme).includes('acme_report'));
      assert.ok(!names(acme).includes('globex_report'));
      const none = await selection.selectTools({ query: 'quarterly revenue report', k: 10 });
      assert.ok(!names(none).some((name) => name.endsWith('_report')));
    });

    it('filters by page with the four pattern modes and falls back when the page has no visible tools', async () => {
      const selection = engine();
      const contacts = await selection.selectTools({ query: 'crm contact', k: 10, context: { page: 'contacts' } });
      assert.deepEqual(names(contacts).filter((n) => !['search_tools', 'health'].includes(n)).sort(), ['crm__create_contact', 'crm__list_contacts']);
      assert.match(contacts.metadata.method, /\+page\+/);
      assert.equal(contacts.metadata.contextKey, 'any:contacts:general');
      const deals = await selection.selectTools({ query: 'pipeline', k: 10, context: { page: 'deals-board' } });
      assert.deepEqual(names(deals).filter((n) => n.startsWith('crm__')).sort(), ['crm__forecast_pipeline', 'crm__list_deals']);
      const unmapped = await selection.selectTools({ query: 'github issue', k: 10, context: { page: 'settings' } });
      assert.ok(names(unmapped).includes('github__create_issue'));
      assert.deepEqual(unmapped.metadata.warnings, []);
      const empty = await selection.selectTools({ query: 'x', k: 10, context: { page: 'contacts', workspace: 'team-b' } });
      assert.ok(empty.metadata.warnings.some((w) => w.includes('page filter was skipped')));
    });

    it('keeps pins first and the most relevant tools within a token budget', async () => {
      const selection = engine();
      const full = await selection.selectTools({ query: 'github issue', k: 5 });
      const pinTokens = full.tools.filter((t) => t.reason === 'pinned').reduce((sum, t) => sum + t.tokens, 0);
      const budget = pinTokens + full.tools[2]!.tokens;
      const limited = await selection.selectTools({ query: 'github issue', k: 5, tokenBudget: budget });
      assert.ok(limited.metadata.tokens.sent <= budget);
      assert.deepEqual(names(limited).slice(0, 2), ['search_tools', 'health']);
      assert.ok(limited.tools.length < full.tools.length);
      assert.ok(limited.metadata.warnings.some((w) => w.includes('token budget')));
    });

    it('formats schemas for every provider', async () => {
      const selection = engine();
      const gemini = await selection.selectTools({ query: 'github issue', k: 3, provider: 'gemini' });
      assert.equal(gemini.schemas.length, 1);
      assert.equal((gemini.schemas[0] as { functionDeclarations: unknown[] }).functionDeclarations.length, gemini.tools.length);
      const anthropic = await selection.selectTools({ query: 'github issue', k: 3, provider: 'anthropic' });
      assert.ok((anthropic.schemas as Array<Record<string, unknown>>).every((s) => 'input_schema' in s));
      const mcp = await selection.selectTools({ query: 'github issue', k: 3, provider: 'mcp' });
      assert.ok((mcp.schemas as Array<Record<string, unknown>>).every((s) => 'inputSchema' in s));
    });

    it('runs on the retrieval service’s index (createRetrievalIndex, no embedder)', async () => {
      const result = await engine({ retrieval: () => createRetrievalIndex() }).selectTools({ query: 'open a new github issue', k: 3 });
      assert.ok(names(result).includes('github__create_issue'), names(result).join(','));
      assert.ok(!names(result).includes('secret-plugin__leak_data'));
    });

    it('rejects invalid requests', async () => {
      const selection = engine();
      await assert.rejects(selection.selectTools({ query: '   ' }), (error) => isQuiverError(error, 'invalid_input'));
      await assert.rejects(selection.selectTools({ query: 'x', k: 0 }), (error) => isQuiverError(error, 'invalid_input'));
      await assert.rejects(selection.selectTools({ query: 'x', provider: 'cohere' as 'openai' }), (error) => isQuiverError(error, 'invalid_input'));
    });
  });

  describe('visibility rules', () => {
    it('applies tier rules with the seed order and fails closed on a missing or unknown tier', async () => {
      const ruleId = await addRule(db, { ruleType: 'tier', effect: 'deny', conditions: { tier: { lt: 'teams' } }, pluginId: fixture.plugins.github });
      try {
        const selection = engine();
        const github = (tier?: string) => selection.selectTools({ query: 'github issue', k: 10, context: tier === undefined ? {} : { tier } }).then((r) => names(r).some((n) => n.startsWith('github__')));
        assert.equal(await github('open_source'), false);
        assert.equal(await github('shared_access'), false);
        assert.equal(await github('teams'), true);
        assert.equal(await github('government'), true);
        assert.equal(await github(undefined), false, 'no tier: the deny applies');
        assert.equal(await github('platinum'), false, 'unknown tier: the deny applies');
      } finally {
        await db.query('DELETE FROM tool_visibility_rules WHERE id = $1', [ruleId]);
      }
    });

    it('keeps two organisations with different rules apart', async () => {
      const rules = [
        await addRule(db, { ruleType: 'org', effect: 'deny', conditions: { orgIds: ['acme'] }, pluginId: fixture.plugins.crm }),
        await addRule(db, { ruleType: 'org', effect: 'deny', conditions: { orgIds: ['globex'] }, pluginId: fixture.plugins.github }),
      ];
      try {
        const selection = engine();
        const queries = ['github issue', 'crm contacts', 'deals pipeline forecast', 'quarterly revenue report', 'list everything'];
        for (const query of queries) {
          const acme = names(await selection.selectTools({ query, k: 20, context: { orgId: 'acme' } }));
          const globex = names(await selection.selectTools({ query, k: 20, context: { orgId: 'globex' } }));
          assert.ok(!acme.some((n) => n.startsWith('crm__') || n === 'globex_report'), `acme saw ${acme.join(',')}`);
          assert.ok(!globex.some((n) => n.startsWith('github__') || n === 'acme_report'), `globex saw ${globex.join(',')}`);
        }
      } finally {
        await db.query('DELETE FROM tool_visibility_rules WHERE id = ANY($1::uuid[])', [rules]);
      }
    });

    it('treats a malformed deny rule as a deny and ignores a malformed allow', async () => {
      const rules = [
        await addRule(db, { ruleType: 'org', effect: 'deny', conditions: { bogus: 1 }, toolId: fixture.tools['github__close_issue']! }),
        await addRule(db, { ruleType: 'org', effect: 'deny', conditions: {}, toolId: fixture.tools['github__list_issues']!, priority: 0 }),
        await addRule(db, { ruleType: 'org', effect: 'allow', conditions: { orgIds: 'acme' }, toolId: fixture.tools['github__list_issues']!, priority: 50 }),
      ];
      try {
        const result = await engine().selectTools({ query: 'github issue close list', k: 10, context: { orgId: 'acme' } });
        assert.ok(!names(result).includes('github__close_issue'));
        assert.ok(!names(result).includes('github__list_issues'));
        assert.ok(names(result).includes('github__create_issue'));
        assert.ok(result.metadata.warnings.some((w) => w.includes('malformed')));
      } finally {
        await db.query('DELETE FROM tool_visibility_rules WHERE id = ANY($1::uuid[])', [rules]);
      }
    });
  });

  describe('caches under concurrency', () => {
    it('concurrent searches that miss the scope and enablement caches share one read of each', async () => {
      const counts = { workspaces: 0, enablements: 0 };
      const counting = {
        ...db,
        async query<Row>(sql: string, params?: readonly unknown[]) {
          if (/FROM workspaces/.test(sql)) counts.workspaces++;
          if (/plugin_enablements/.test(sql)) counts.enablements++;
          return db.query<Row>(sql, params);
        },
      } as Database;
      const selection = engine({ db: counting, listen: false });
      const results = await Promise.all(Array.from({ length: 8 }, () => selection.selectTools({ query: 'open a github issue', k: 3 })));
      // Each got its selection (the bandit's draws differ, so the tools may too).
      for (const result of results) assert.ok(names(result).some((name) => name.startsWith('github__')), names(result).join(','));
      assert.deepEqual(counts, { workspaces: 1, enablements: 1 });
    });
  });

  describe('failure modes', () => {
    it('fails closed when visibility rules or enablement cannot be read', async () => {
      for (const pattern of [/tool_visibility_rules/, /plugin_enablements/, /FROM workspaces/, /FROM tools t\s/]) {
        const faulty = faultyDatabase(db, pattern);
        faulty.failing = true;
        const selection = engine({ db: faulty, listen: false });
        await assert.rejects(selection.selectTools({ query: 'github issue' }), (error) => isQuiverError(error) && ['unavailable'].includes(error.code), String(pattern));
      }
    });

    it('fails open with a warning when page mappings, retrieval or bandit statistics fail', async () => {
      const faulty = faultyDatabase(db, /tool_page_mappings|tool_bandit_stats/);
      faulty.failing = true;
      const throwing = createLexicalRetrieval();
      const broken = { ...throwing, search: () => Promise.reject(new Error('index down')) };
      const selection = engine({ db: faulty, listen: false, retrieval: broken });
      const result = await selection.selectTools({ query: 'github issue', k: 3, context: { page: 'contacts' } });
      assert.equal(result.tools.length, 5);
      const warnings = result.metadata.warnings.join(' | ');
      assert.match(warnings, /page mappings could not be read/);
      assert.match(warnings, /retrieval failed/);
      assert.match(warnings, /bandit statistics could not be read/);
      assert.match(result.metadata.method, /catalog_order/);
    });

    it('never returns a tool the index offers outside the candidate set', async () => {
      const leaky = { ...createLexicalRetrieval(), build() {}, search: () => ({ results: [{ id: fixture.tools['secret-plugin__leak_data']!, score: 9 }, { id: fixture.tools['github__create_issue']!, score: 1 }] }) };
      const result = await engine({ retrieval: leaky }).selectTools({ query: 'anything', k: 3 });
      assert.ok(!names(result).includes('secret-plugin__leak_data'));
      assert.ok(names(result).includes('github__create_issue'));
    });

    it('returns catalog order with a warning when nothing matches the query', async () => {
      const result = await engine().selectTools({ query: 'zzzqqq xyzzy', k: 2 });
      assert.equal(result.tools.length, 4);
      assert.ok(result.metadata.warnings.some((w) => w.includes('no tool matched')));
    });

    it('logs, never throws, when batched events cannot be written', async () => {
      const faulty = faultyDatabase(db, /INSERT INTO tool_selection_events/);
      faulty.failing = true;
      const logger = recordingLogger();
      const selection = engine({ db: faulty, listen: false, logger, events: { flushMs: 5, durability: { kind: 'batched' } } });
      const result = await selection.selectTools({ query: 'github issue' });
      assert.ok(result.metadata.eventId);
      await selection.flush();
      assert.equal(logger.errors.length, 1);
    });

    it('written through (issue #23): an event that cannot be stored gets no id, the tools still go out with a warning', async () => {
      const faulty = faultyDatabase(db, /INSERT INTO tool_selection_events/);
      const logger = recordingLogger();
      const selection = engine({ db: faulty, listen: false, logger, events: { flushMs: 5, durability: { kind: 'write-through' } } });
      const stored = await selection.selectTools({ query: 'github issue' });
      const eventId = stored.metadata.eventId!;
      // Acknowledged means a row already: no flush before the read.
      assert.equal((await db.query('SELECT 1 FROM tool_selection_events WHERE id = $1', [eventId])).rows.length, 1);
      faulty.failing = true;
      const result = await selection.selectTools({ query: 'github issue' });
      assert.equal(result.metadata.eventId, undefined);
      assert.ok(names(result).length > 0);
      assert.ok(result.metadata.warnings.some((w) => w.includes('selection event not logged')));
      assert.equal(logger.errors.length, 1);
    });
  });

  describe('caches', () => {
    it('does not touch the database on a warm selection', async () => {
      const counting = faultyDatabase(db, /$^/);
      const selection = engine({ db: counting, listen: false });
      await selection.selectTools({ query: 'github issue', context: { page: 'contacts', orgId: 'acme', tier: 'teams' }, log: false });
      const before = counting.queries;
      for (let i = 0; i < 20; i++) await selection.selectTools({ query: `github issue ${i}`, context: { page: 'contacts', orgId: 'acme', tier: 'teams' }, log: false });
      assert.equal(counting.queries, before);
      assert.ok(selection.cacheStats().policy!.hits >= 20);
    });

    it('re-reads after invalidate and after a NOTIFY from any connection', async () => {
      const selection = engine();
      await selection.ready();
      const query = 'teleport the quantum widget';
      assert.ok(!names(await selection.selectTools({ query, k: 3 })).includes('github__teleport_widget'));
      const id = await addTool(db, { name: 'teleport_widget', description: 'Teleport the quantum widget', pluginId: fixture.plugins.github, categoryId: fixture.categories.issues });
      assert.ok(!names(await selection.selectTools({ query, k: 3 })).includes('github__teleport_widget'), 'cached for the TTL');
      selection.invalidate('tools');
      assert.ok(names(await selection.selectTools({ query, k: 3 })).includes('github__teleport_widget'));

      await db.query(`UPDATE tools SET deleted_at = now() WHERE id = $1`, [id]);
      assert.ok(names(await selection.selectTools({ query, k: 3 })).includes('github__teleport_widget'), 'still cached');
      await notifyCatalogChanged(db, 'tools');
      await until(async () => !names(await selection.selectTools({ query, k: 3 })).includes('github__teleport_widget'));
    });

    it('picks up a rule change after a rules notification', async () => {
      const selection = engine();
      await selection.ready();
      assert.ok(names(await selection.selectTools({ query: 'github issue', k: 5 })).includes('github__create_issue'));
      const ruleId = await addRule(db, { ruleType: 'composite', effect: 'deny', conditions: {}, toolId: fixture.tools['github__create_issue']! });
      try {
        await notifyCatalogChanged(db, 'rules');
        await until(async () => !names(await selection.selectTools({ query: 'github issue', k: 5 })).includes('github__create_issue'));
      } finally {
        await db.query('DELETE FROM tool_visibility_rules WHERE id = $1', [ruleId]);
        await notifyCatalogChanged(db, 'rules');
      }
    });

    it('expires the catalog snapshot after its TTL only when the catalog changed', async () => {
      let now = Date.parse('2030-01-01T00:00:00Z');
      const counting = faultyDatabase(db, /$^/);
      const selection = engine({ db: counting, listen: false, clock: () => new Date(now) });
      await selection.selectTools({ query: 'github issue', log: false });
      now += 61_000;
      const before = counting.queries;
      await selection.selectTools({ query: 'github issue', log: false });
      // Expired caches re-read cheaply: the signature query, enablement, rules, bandit; not the tool list.
      assert.ok(counting.queries - before <= 6, `${counting.queries - before} queries`);
    });
  });

  if (backend.name === 'postgres') {
    it('invalidates across processes sharing one PostgreSQL (two connections)', async () => {
      const { rows } = await db.query<{ name: string }>('SELECT current_database() AS name');
      const url = new URL(process.env.QUIVER_TEST_DATABASE_URL!);
      url.pathname = `/${rows[0]!.name}`;
      const second = (await openStore({ kind: 'postgres', url: url.toString() }, { migrate: false, poolSize: 2 })).db;
      const other = createSelectionEngine({ db: second, random: createSeededRandom(2) });
      try {
        await other.ready();
        const query = 'summon the cross process marker';
        assert.ok(!names(await other.selectTools({ query, k: 3, log: false })).includes('github__cross_process_marker'));
        await addTool(db, { name: 'cross_process_marker', description: 'Summon the cross process marker', pluginId: fixture.plugins.github });
        assert.ok(!names(await other.selectTools({ query, k: 3, log: false })).includes('github__cross_process_marker'), 'cached in the other process');
        await notifyCatalogChanged(db, 'tools');
        await until(async () => names(await other.selectTools({ query, k: 3, log: false })).includes('github__cross_process_marker'));
      } finally {
        await other.close();
        await second.close();
      }
    });
  }

  describe('events and outcomes', () => {
    it('logs a selection off the hot path and records its outcome', async () => {
      const selection = engine();
      const result = await selection.selectTools({ query: 'create a github issue', k: 3, context: { orgId: 'acme', page: 'issues', tier: 'teams', sessionId: 's1' } });
      const eventId = result.metadata.eventId!;
      // Recording before the flush works: the pending event is written first.
      const outcome = await selection.recordOutcome(eventId, { toolsCalled: ['github__create_issue', 'not_offered'], success: true });
      assert.equal(outcome.outcome, 'success');
      assert.deepEqual(outcome.calledToolIds, [fixture.tools['github__create_issue']]);
      assert.deepEqual(outcome.unresolved, ['not_offered']);
      const { rows } = await db.query<Record<string, unknown>>('SELECT * FROM tool_selection_events WHERE id = $1', [eventId]);
      const row = rows[0]!;
      assert.equal(row.query_text, 'create a github issue');
      assert.equal(row.org_id, 'acme');
      assert.equal(row.context_key, 'teams:issues:general:org=acme');
      assert.equal(row.session_id, 's1');
      assert.equal(row.provider, 'openai');
      assert.equal((row.selected_tool_ids as string[]).length, result.tools.length);
      assert.equal(row.tool_call_success, true);
      assert.deepEqual(row.tools_called, ['github__create_issue', 'not_offered']);
      const stats = await db.query<{ tool_id: string; alpha: number; beta_param: number; total_selections: number; total_successes: number }>(
        `SELECT tool_id, alpha, beta_param, total_selections, total_successes FROM tool_bandit_stats WHERE context_key = 'teams:issues:general:org=acme'`,
      );
      const created = stats.rows.find((s) => s.tool_id === fixture.tools['github__create_issue'])!;
      assert.deepEqual([created.alpha, created.beta_param, Number(created.total_selections), Number(created.total_successes)], [2, 1, 1, 1]);
      assert.equal(stats.rows.length, result.tools.length, 'every offered tool counted as selected');
      assert.ok(stats.rows.filter((s) => s.tool_id !== fixture.tools['github__create_issue']).every((s) => s.alpha === 1 && s.beta_param === 1));

      await assert.rejects(selection.recordOutcome(eventId, { toolsCalled: [], success: true }), (error) => isQuiverError(error, 'conflict'));
    });

    it('resolves provider names and ids, and hides other organisations’ events', async () => {
      const selection = engine();
      const result = await selection.selectTools({ query: 'list github issues', k: 3, context: { orgId: 'globex' } });
      const eventId = result.metadata.eventId!;
      await assert.rejects(selection.recordOutcome(eventId, { toolsCalled: [], success: true }, { orgId: 'acme' }), (error) => isQuiverError(error, 'not_found'));
      // null is "an event without an organisation", not "unchecked".
      await assert.rejects(selection.recordOutcome(eventId, { toolsCalled: [], success: true }, { orgId: null }), (error) => isQuiverError(error, 'not_found'));
      await assert.rejects(selection.recordOutcome('00000000-0000-0000-0000-000000000000', { toolsCalled: [], success: true }), (error) => isQuiverError(error, 'not_found'));
      await assert.rejects(selection.recordOutcome('not-a-uuid', { toolsCalled: [], success: true }), (error) => isQuiverError(error, 'not_found'));
      const target = result.tools.find((t) => t.reason !== 'pinned')!;
      const outcome = await selection.recordOutcome(eventId, { toolsCalled: [target.providerName, target.id], success: false }, { orgId: 'globex' });
      assert.equal(outcome.outcome, 'failure');
      assert.deepEqual(outcome.calledToolIds, [target.id]);
      assert.deepEqual(outcome.toolsCalled, [target.qualifiedName, target.qualifiedName]);
    });

    it('queues outcomes off the hot path and writes them in batches with the bandit updates (issue #18)', async () => {
      const logger = recordingLogger();
      const counting = faultyDatabase(db, /$^/);
      const selection = engine({ db: counting, logger, listen: false, bandit: { poolFactor: 1 }, events: { flushMs: 60_000 } });
      const context = { page: 'queued', tier: 'teams' };
      const events: string[] = [];
      for (let i = 0; i < 30; i++) events.push((await selection.selectTools({ query: 'create github issue', k: 1, context })).metadata.eventId!);
      const before = counting.queries;
      events.forEach((eventId, i) => selection.queueOutcome(eventId, { toolsCalled: i % 3 === 0 ? [] : ['github__create_issue'], success: i % 5 !== 0 }));
      assert.equal(counting.queries, before, 'queueing an outcome reads and writes nothing');
      await selection.flush();
      const { rows } = await db.query<{ alpha: number; beta_param: number; total_selections: number; total_successes: number }>(
        `SELECT alpha, beta_param, total_selections, total_successes FROM tool_bandit_stats WHERE tool_id = $1 AND context_key = 'teams:queued:general'`,
        [fixture.tools['github__create_issue']],
      );
      // 20 called (i % 3 ≠ 0), of which 4 failed (i % 5 = 0 among them: 5, 10, 20, 25); 30 selections.
      assert.deepEqual([rows[0]!.alpha, rows[0]!.beta_param, Number(rows[0]!.total_selections), Number(rows[0]!.total_successes)], [17, 5, 30, 16]);
      const outcomes = await db.query<{ outcome: string; n: number }>(
        'SELECT outcome, count(*)::int AS n FROM tool_selection_events WHERE id = ANY($1::uuid[]) GROUP BY outcome ORDER BY outcome',
        [events],
      );
      assert.deepEqual(outcomes.rows.map((row) => [row.outcome, Number(row.n)]), [['failure', 4], ['no_call', 10], ['success', 16]]);
      assert.deepEqual(logger.errors, []);

      // A second report of the same event takes the transactional path and is refused there: no double count.
      selection.queueOutcome(events[1]!, { toolsCalled: ['github__create_issue'], success: true });
      await until(() => logger.warnings.length > 0);
      assert.ok(isQuiverError((logger.warnings[0] as { err: unknown }).err, 'conflict'));
      const again = await db.query<{ total_selections: number }>(
        `SELECT total_selections FROM tool_bandit_stats WHERE tool_id = $1 AND context_key = 'teams:queued:general'`,
        [fixture.tools['github__create_issue']],
      );
      assert.equal(Number(again.rows[0]!.total_selections), 30);
    });

    it('writes a flush of outcomes and the arms of every context in one statement, each context counted apart, each event once (issue #28)', async () => {
      // Every statement, in transactions too.
      const statements: string[] = [];
      const recording = (target: Queryable): Queryable => ({
        async query<Row>(sql: string, params?: readonly unknown[]) {
          statements.push(sql);
          return target.query<Row>(sql, params);
        },
      });
      const recorder: Database = {
        ...db,
        ...recording(db),
        transaction<T>(work: (tx: Queryable) => Promise<T>) {
          return db.transaction((tx) => work(recording(tx)));
        },
      };
      const selection = engine({ db: recorder, listen: false, bandit: { poolFactor: 1 }, events: { flushMs: 60_000 } });
      const contexts = [
        { page: 'batch-a', tier: 'teams' },
        { page: 'batch-b', tier: 'teams' },
        { page: 'batch-c', tier: 'teams' },
      ];
      const events: Array<{ eventId: string; context: number }> = [];
      for (let round = 0; round < 4; round++) {
        for (const [context, value] of contexts.entries()) {
          const result = await selection.selectTools({ query: 'create github issue', k: 1, context: value });
          assert.equal(result.tools.find((t) => t.reason !== 'pinned')?.qualifiedName, 'github__create_issue');
          events.push({ eventId: result.metadata.eventId!, context });
        }
      }
      await selection.flush();
      statements.length = 0;
      // Context c's calls fail once; context b reports no call once.
      events.forEach(({ eventId, context }, i) =>
        selection.queueOutcome(eventId, { toolsCalled: context === 1 && i < 3 ? [] : ['github__create_issue'], success: !(context === 2 && i < 3) }),
      );
      await selection.flush();
      assert.equal(statements.length, 1, statements.join('\n---\n'));
      assert.match(statements[0]!, /UPDATE tool_selection_events[\s\S]*INSERT INTO tool_bandit_stats/);
      const armRows = async () =>
        (
          await db.query<{ context_key: string; alpha: number; beta_param: number; total_selections: number; total_successes: number }>(
            `SELECT context_key, alpha, beta_param, total_selections, total_successes FROM tool_bandit_stats WHERE tool_id = $1 AND context_key LIKE '%:batch-_:general' ORDER BY context_key`,
            [fixture.tools['github__create_issue']],
          )
        ).rows.map((row) => [row.context_key, row.alpha, row.beta_param, Number(row.total_selections), Number(row.total_successes)]);
      const expected = [
        ['teams:batch-a:general', 5, 1, 4, 4],
        ['teams:batch-b:general', 4, 1, 4, 3],
        ['teams:batch-c:general', 4, 2, 4, 3],
      ];
      assert.deepEqual(await armRows(), expected);
      const outcomes = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tool_selection_events WHERE id = ANY($1::uuid[]) AND outcome_at IS NOT NULL', [events.map((e) => e.eventId)]);
      assert.equal(Number(outcomes.rows[0]!.n), 12);
      // The same outcomes again (another writer got there first): nothing written, no arm moves.
      const again = await writeEventOutcomesWithArms(
        db,
        events.map(({ eventId }) => ({ id: eventId, toolsCalled: ['github__create_issue'], calledToolIds: [fixture.tools['github__create_issue']!], success: true, outcome: 'success', at: new Date() })),
        events.map(({ eventId, context }) => ({ eventId, contextKey: `teams:batch-${'abc'[context]}:general`, toolId: fixture.tools['github__create_issue']!, alpha: 1, beta: 0, selections: 1, successes: 1 })),
      );
      assert.equal(again.size, 0);
      assert.deepEqual(await armRows(), expected);
    });

    it('queued outcomes: unknown events and bad reports are logged, never thrown; recordOutcome after a queued one conflicts', async () => {
      const logger = recordingLogger();
      const selection = engine({ logger });
      assert.doesNotThrow(() => selection.queueOutcome('00000000-0000-0000-0000-000000000000', { toolsCalled: [], success: true }));
      await until(() => logger.warnings.length === 1);
      assert.ok(isQuiverError((logger.warnings[0] as { err: unknown }).err, 'not_found'));
      const eventId = (await selection.selectTools({ query: 'list github issues', k: 2 })).metadata.eventId!;
      assert.doesNotThrow(() => selection.queueOutcome(eventId, { toolsCalled: 'nope' } as never));
      await until(() => logger.warnings.length === 2);
      assert.ok(isQuiverError((logger.warnings[1] as { err: unknown }).err, 'invalid_input'));
      selection.queueOutcome(eventId, { toolsCalled: [], success: true });
      await assert.rejects(selection.recordOutcome(eventId, { toolsCalled: [], success: true }), (error) => isQuiverError(error, 'conflict'));
      const { rows } = await db.query<{ outcome: string }>('SELECT outcome FROM tool_selection_events WHERE id = $1', [eventId]);
      assert.equal(rows[0]!.outcome, 'no_call');
    });

    it('does not log when asked not to', async () => {
      const selection = engine();
      const result = await selection.selectTools({ query: 'github issue', log: false });
      assert.equal(result.metadata.eventId, undefined);
    });

    it('counts exactly under 50 concurrent outcomes for the same tool and context', async () => {
      // Pool = k = 1: the bandit cannot reorder, so every event offers the top retrieved tool.
      const selection = engine({ bandit: { poolFactor: 1 } });
      const context = { page: 'concurrency', tier: 'teams' };
      const events: string[] = [];
      for (let i = 0; i < 50; i++) {
        const result = await selection.selectTools({ query: 'create github issue', k: 1, context });
        assert.equal(result.tools.find((t) => t.reason !== 'pinned')?.qualifiedName, 'github__create_issue');
        events.push(result.metadata.eventId!);
      }
      await selection.flush();
      await Promise.all(events.map((eventId, i) => selection.recordOutcome(eventId, { toolsCalled: ['github__create_issue'], success: i % 5 !== 0 })));
      const { rows } = await db.query<{ alpha: number; beta_param: number; total_selections: number; total_successes: number }>(
        `SELECT alpha, beta_param, total_selections, total_successes FROM tool_bandit_stats WHERE tool_id = $1 AND context_key = 'teams:concurrency:general'`,
        [fixture.tools['github__create_issue']],
      );
      assert.deepEqual([rows[0]!.alpha, rows[0]!.beta_param, Number(rows[0]!.total_selections), Number(rows[0]!.total_successes)], [41, 11, 50, 40]);
    });

    it('learns: a tool that keeps succeeding in a context rises to the top there', async () => {
      const selection = engine({ random: createSeededRandom(3) });
      const context = { page: 'learning', tier: 'teams' };
      const target = 'github__close_issue';
      for (let i = 0; i < 40; i++) {
        const result = await selection.selectTools({ query: 'github issue', k: 3, context });
        const offered = names(result);
        const called = offered.includes(target) ? [target] : [offered.find((n) => n.startsWith('github__'))!];
        await selection.recordOutcome(result.metadata.eventId!, { toolsCalled: called, success: called[0] === target });
      }
      const firsts = async (where: typeof context) => {
        let count = 0;
        for (let i = 0; i < 40; i++) {
          const result = await selection.selectTools({ query: 'github issue', k: 3, context: where, log: false });
          if (result.tools.find((t) => t.reason !== 'pinned')?.qualifiedName === target) count++;
        }
        return count;
      };
      const learned = await firsts(context);
      const cold = await firsts({ page: 'elsewhere', tier: 'teams' });
      assert.ok(learned >= 24 && learned >= cold + 10, `target first: learned ${learned}/40, cold ${cold}/40`);
    });
  });

  describe('analytics', () => {
    it('reports metrics, heatmap, accuracy and drift, filtered by organisation', async () => {
      const selection = engine();
      const a = await selection.selectTools({ query: 'github issue', k: 2, context: { orgId: 'org-a', page: 'board' } });
      const b = await selection.selectTools({ query: 'crm contacts', k: 2, context: { orgId: 'org-b' } });
      await selection.selectTools({ query: 'deals', k: 2, context: { orgId: 'org-b' } });
      const offeredA = a.tools.find((t) => t.reason !== 'pinned')!;
      await selection.recordOutcome(a.metadata.eventId!, { toolsCalled: [offeredA.qualifiedName], success: true });
      await selection.recordOutcome(b.metadata.eventId!, { toolsCalled: ['somewhere_else'], success: false });

      const metricsA = await selection.analytics.metrics({}, 'org-a');
      assert.equal(metricsA.total, 1);
      assert.deepEqual(metricsA.outcomes, [{ outcome: 'success', count: 1 }]);
      assert.ok(metricsA.latencyP50Ms !== null && metricsA.latencyP95Ms !== null);
      assert.ok(metricsA.averageTokensSaved! > 0);
      const metricsB = await selection.analytics.metrics({}, 'org-b');
      assert.equal(metricsB.total, 2);
      const all = await selection.analytics.metrics();
      assert.ok(all.total >= 3);
      assert.ok(all.methods.length >= 1);

      const heat = await selection.analytics.heatmap({}, 'org-a');
      assert.ok(heat.cells.every((cell) => cell.page === 'board'));
      assert.equal(heat.cells.find((cell) => cell.toolId === offeredA.id)?.called, 1);

      const accuracyA = await selection.analytics.accuracy({}, 'org-a');
      assert.equal(accuracyA.trend.length, 1);
      assert.equal(accuracyA.trend[0]!.hitRate, 1);
      const accuracyB = await selection.analytics.accuracy({}, 'org-b');
      assert.equal(accuracyB.trend[0]!.hitRate, 0, 'a called tool that was not offered is a miss');

      const drift = await selection.analytics.drift({}, 'acme');
      assert.ok(drift.tools.some((t) => t.qualifiedName === 'acme_report'));
      assert.ok(!drift.tools.some((t) => t.qualifiedName === 'globex_report'));
      assert.ok(drift.tools.every((t) => t.embeddingStatus === 'pending' && t.daysSinceEmbed > 7));
      await assert.rejects(selection.analytics.metrics({ days: 0 }), (error) => isQuiverError(error, 'invalid_input'));
    });
  });
});
