/**
 * The store's safety net (issue #18, finding 7): on both engines, an engine error that blames
 * the values becomes `invalid_input` without echoing them; other errors pass unchanged.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import { QuiverError, isQuiverError } from '../core/errors.ts';
import type { Database } from './database.ts';
import { mapDatabaseError, sqlStateOf } from './database-errors.ts';
import { isUniqueViolation } from './repositories/mapping.ts';
import { insertSelectionEvents, type SelectionEventWrite } from './repositories/selection-events.ts';

const refused = (sqlState: string) => (error: unknown) =>
  isQuiverError(error, 'invalid_input') && (error.details as { sqlState: string }).sqlState === sqlState && error.kind === 'user';

describeEachBackend('database input errors', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => db.close());

  it('a NUL byte in text, a NUL in jsonb and a non-UUID id become invalid_input with their SQLSTATE', async () => {
    await assert.rejects(db.query('SELECT $1::text', ['a\u0000b']), refused('22021'));
    await assert.rejects(db.query('SELECT $1::jsonb', [JSON.stringify({ a: 'x\u0000' })]), refused('22P05'));
    await assert.rejects(db.query('SELECT id FROM plugins WHERE id = $1', ['not-a-uuid']), refused('22P02'));
    await assert.rejects(db.query('SELECT $1::int', ['99999999999']), refused('22003'));
  });

  it('does the same inside a transaction, and the message never quotes the refused value', async () => {
    await assert.rejects(
      db.transaction(async (tx) => tx.query('SELECT $1::uuid', ['secret-token-123'])),
      (error) => refused('22P02')(error) && !(error as Error).message.includes('secret-token-123'),
    );
  });

  it('leaves constraint violations and syntax errors as they are', async () => {
    await db.query(`INSERT INTO plugins (name) VALUES ('dup')`);
    const duplicate = await db.query(`INSERT INTO plugins (name) VALUES ('dup')`).catch((error: unknown) => error);
    assert.ok(isUniqueViolation(duplicate));
    assert.ok(!(duplicate instanceof QuiverError));
    const syntax = await db.query('SELEC 1').catch((error: unknown) => error);
    assert.equal(sqlStateOf(syntax), '42601');
    assert.ok(!(syntax instanceof QuiverError));
  });

  it('a selection event with a NUL in its query is refused as invalid_input, and the others of the batch are not stored with it', async () => {
    const event = (id: string, queryText: string): SelectionEventWrite => ({
      id, queryText, pageContext: null, orgId: null, userId: null, workspaceId: null, projectId: null, sessionId: null,
      contextKey: 'k', tier: null, provider: 'openai', selectedToolIds: [], candidateCount: 0, selectionMethod: 'test',
      latencyMs: 1, stageTimings: {}, tokensUsed: 0, tokensTotal: 0, tokensSaved: 0, warnings: [], createdAt: new Date(),
    });
    const good = '11111111-1111-4111-8111-111111111111';
    await assert.rejects(insertSelectionEvents(db, [event(good, 'echo'), event('22222222-2222-4222-8222-222222222222', 'echo\u0000')]), refused('22P05'));
    // One statement: nothing of that batch is stored (the batch writer is what isolates the bad row).
    assert.equal((await db.query('SELECT 1 FROM tool_selection_events WHERE id = $1', [good])).rows.length, 0);
  });
});

it('mapDatabaseError: only class 22 and 54000/54001 are input errors; QuiverErrors pass through', () => {
  assert.ok(isQuiverError(mapDatabaseError({ code: '54001' }), 'invalid_input'));
  assert.ok(isQuiverError(mapDatabaseError({ code: '22P02' }), 'invalid_input'));
  for (const code of ['23505', '23503', '40001', '57014', '08006', 'ECONNRESET']) assert.deepEqual(mapDatabaseError({ code }), { code });
  const own = new QuiverError('not_found', 'x');
  assert.equal(mapDatabaseError(own), own);
  assert.equal(mapDatabaseError(undefined), undefined);
  assert.equal(sqlStateOf(mapDatabaseError({ code: '22021' })), '22021');
});
