/**
 * The call-event recorder and the plugin_call_events aggregates, on every backend: batching,
 * the timer, flush on close, the queue bound, insert failures logged (not thrown), skipped
 * events, and per-plugin / per-tool aggregates with percentile_cont latencies.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Logger } from '../core/logger.ts';
import type { Database, Queryable } from '../store/database.ts';
import { pluginCallAggregates, toolCallAggregates } from '../store/repositories/plugin-call-events.ts';
import { createCallEventRecorder, type RecordableCallEvent } from './call-event-recorder.ts';

function capturingLogger(): Logger & { lines: Array<{ level: string; message: string | undefined; context: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string | undefined; context: Record<string, unknown> }> = [];
  const write = (level: string) => (context: object, message?: string) => {
    lines.push({ level, message, context: context as Record<string, unknown> });
  };
  const logger = { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: () => logger };
  return logger;
}

/** The real database, counting the statements that insert call events. */
function countingInserts(db: Queryable): Queryable & { inserts: number } {
  const counted = {
    inserts: 0,
    query<Row>(sql: string, params?: readonly unknown[]) {
      if (sql.includes('INSERT INTO plugin_call_events')) counted.inserts += 1;
      return db.query<Row>(sql, params);
    },
  };
  return counted;
}

describeEachBackend('plugin call events', (backend) => {
  let db: Database;
  let alpha: string;
  let beta: string;
  const plugin = async (name: string) => (await db.query<{ id: string }>('INSERT INTO plugins (name) VALUES ($1) RETURNING id', [name])).rows[0]!.id;
  const event = (pluginId: string, tool: string, overrides: Partial<RecordableCallEvent> = {}): RecordableCallEvent => ({
    pluginId,
    pluginName: pluginId === alpha ? 'alpha' : 'beta',
    tool,
    latencyMs: 5,
    outcome: 'success',
    at: new Date(),
    ...overrides,
  });
  const stored = async (pluginId: string) =>
    (await db.query<{ tool_name: string }>('SELECT tool_name FROM plugin_call_events WHERE plugin_id = $1 ORDER BY created_at, tool_name', [pluginId])).rows.map((r) => r.tool_name);

  before(async () => {
    db = await backend.open();
    alpha = await plugin('alpha');
    beta = await plugin('beta');
  });
  after(async () => db.close());

  it('writes a full batch at once, in one insert per batch of at most batchSize', async () => {
    const counted = countingInserts(db);
    const recorder = createCallEventRecorder({ db: counted, batchSize: 3, flushMs: 60_000 });
    // Only to show that nothing happens below a batch (a negative check cannot wait for an event).
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
    let seq = 0;
    const next = () => recorder.record(event(beta, `t${seq}`, { at: new Date(Date.now() + seq++) }));
    next();
    next();
    await settle();
    assert.deepEqual(recorder.stats(), { queued: 2, written: 0, dropped: 0, failed: 0, skipped: 0 }, 'below a batch: waits for the timer');
    next();
    // A full batch is written without waiting for the timer: wait for that write, not for a fixed time.
    const deadline = Date.now() + 10_000;
    while (recorder.stats().written < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(recorder.stats(), { queued: 0, written: 3, dropped: 0, failed: 0, skipped: 0 });
    assert.equal(counted.inserts, 1);
    // A burst is written as batches of three: 3 + 3 + 1.
    for (let index = 0; index < 7; index += 1) next();
    await recorder.flush();
    assert.equal(recorder.stats().written, 10);
    assert.equal(counted.inserts, 4);
    assert.deepEqual(await stored(beta), Array.from({ length: 10 }, (_, index) => `t${index}`));
    await recorder.close();
    await db.query('DELETE FROM plugin_call_events');
  });

  it('writes a full default batch in one insert, all stored, the rest at close (issue #28: a statement per batch, not per 50 rows)', async () => {
    const counted = countingInserts(db);
    const recorder = createCallEventRecorder({ db: counted, flushMs: 60_000 });
    for (let index = 0; index < 210; index += 1) recorder.record(event(beta, `c${String(index).padStart(3, '0')}`, { at: new Date(Date.now() + index) }));
    await recorder.close();
    assert.equal(recorder.stats().written, 210);
    // 200 (the full batch, one statement) + 10 at close.
    assert.equal(counted.inserts, 2);
    assert.equal((await stored(beta)).length, 210);
    await db.query('DELETE FROM plugin_call_events');
  });

  it('writes what waits once the timer fires', async () => {
    const recorder = createCallEventRecorder({ db, flushMs: 100 });
    recorder.record(event(beta, 'timed'));
    assert.equal(recorder.stats().queued, 1);
    const deadline = Date.now() + 5_000;
    while (recorder.stats().written < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await stored(beta), ['timed']);
    await recorder.close();
    await db.query('DELETE FROM plugin_call_events');
  });

  it('flushes on close and ignores events recorded after it', async () => {
    const recorder = createCallEventRecorder({ db, flushMs: 60_000 });
    recorder.record(event(alpha, 'a'));
    recorder.record(event(alpha, 'b', { at: new Date(Date.now() + 1) }));
    assert.deepEqual(await stored(alpha), [], 'nothing written before the timer or a flush');
    await recorder.close();
    assert.deepEqual(await stored(alpha), ['a', 'b']);
    recorder.record(event(alpha, 'late'));
    await recorder.flush();
    await recorder.close();
    assert.deepEqual(await stored(alpha), ['a', 'b']);
    assert.equal(recorder.stats().queued, 0);
    await db.query('DELETE FROM plugin_call_events');
  });

  it('drops the oldest events when the queue is full, with one warning and a counter', async () => {
    const logger = capturingLogger();
    const recorder = createCallEventRecorder({ db, logger, maxQueue: 3, batchSize: 100, flushMs: 60_000 });
    for (let index = 0; index < 6; index += 1) recorder.record(event(alpha, `q${index}`, { at: new Date(Date.now() + index) }));
    assert.deepEqual(recorder.stats(), { queued: 3, written: 0, dropped: 3, failed: 0, skipped: 0 });
    const warnings = logger.lines.filter((line) => line.level === 'warn' && /queue full/.test(line.message ?? ''));
    assert.equal(warnings.length, 1);
    await recorder.close();
    assert.deepEqual(await stored(alpha), ['q3', 'q4', 'q5']);
    assert.ok(logger.lines.some((line) => line.level === 'warn' && line.context['dropped'] === 3 && /drained/.test(line.message ?? '')));
    await db.query('DELETE FROM plugin_call_events');
  });

  it('drops an event the database refuses alone: the rest of its batch is stored, with one warning', async () => {
    const logger = capturingLogger();
    const recorder = createCallEventRecorder({ db, logger, flushMs: 60_000 });
    // The outcome CHECK of migration 0041 refuses this row (23514); a NUL byte refuses the session id (22P05 in jsonb).
    recorder.record(event(alpha, 'before'));
    recorder.record(event(alpha, 'bad', { outcome: 'exploded' as RecordableCallEvent['outcome'] }));
    recorder.record(event(alpha, 'good-but-same-batch', { at: new Date(Date.now() + 1) }));
    recorder.record(event(beta, 'nul', { sessionId: 'secret-session\u0000' }));
    await recorder.flush();
    assert.deepEqual(recorder.stats(), { queued: 0, written: 2, dropped: 0, failed: 2, skipped: 0 });
    assert.deepEqual(await stored(alpha), ['before', 'good-but-same-batch']);
    assert.deepEqual(await stored(beta), []);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    assert.deepEqual(warnings.map((line) => [line.context['sqlState'], line.context['plugin'], line.context['events']]), [
      ['23514', 'alpha', 1],
      ['22P05', 'beta', 1],
    ]);
    assert.equal(logger.lines.filter((line) => line.level === 'error').length, 0);
    // Only the SQLSTATE is logged, never the refused row (its session id may be a secret).
    assert.ok(!JSON.stringify(logger.lines).includes('secret-session'));
    recorder.record(event(alpha, 'after', { at: new Date(Date.now() + 2) }));
    await recorder.close();
    assert.deepEqual(await stored(alpha), ['before', 'good-but-same-batch', 'after']);
    await db.query('DELETE FROM plugin_call_events');
  });

  it('logs a failed batch once (the database, not a row, failed) instead of throwing, and keeps recording', async () => {
    const logger = capturingLogger();
    let down = true;
    const flaky: Queryable = {
      query<Row>(sql: string, params?: readonly unknown[]) {
        if (down && sql.includes('INSERT INTO plugin_call_events')) return Promise.reject(Object.assign(new Error('connection terminated'), { code: '57P01' }));
        return db.query<Row>(sql, params);
      },
    };
    const counted = countingInserts(flaky);
    const recorder = createCallEventRecorder({ db: counted, logger, flushMs: 60_000 });
    recorder.record(event(alpha, 'lost-1'));
    recorder.record(event(alpha, 'lost-2'));
    await recorder.flush();
    assert.deepEqual(recorder.stats(), { queued: 0, written: 0, dropped: 0, failed: 2, skipped: 0 });
    assert.equal(counted.inserts, 1, 'no retries against a failing database');
    const errors = logger.lines.filter((line) => line.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.context['events'], 2);
    assert.ok(errors[0]!.context['err'] instanceof Error);
    down = false;
    recorder.record(event(alpha, 'after'));
    await recorder.close();
    assert.deepEqual(await stored(alpha), ['after']);
    await db.query('DELETE FROM plugin_call_events');
  });

  it('skips events of specs outside the store and of plugins removed meanwhile', async () => {
    const gone = await plugin('gone');
    const recorder = createCallEventRecorder({ db, flushMs: 60_000 });
    recorder.record(event('local-test-plugin', 'x'));
    recorder.record(event(gone, 'y'));
    recorder.record(event(alpha, 'z'));
    await db.query('DELETE FROM plugins WHERE id = $1', [gone]);
    await recorder.close();
    assert.deepEqual(recorder.stats(), { queued: 0, written: 1, dropped: 0, failed: 0, skipped: 2 });
    assert.deepEqual(await stored(alpha), ['z']);
    await db.query('DELETE FROM plugin_call_events');
  });

  it('prunes events older than the retention period, and keeps the rest', async () => {
    const gamma = await plugin('gamma');
    const now = new Date('2026-06-01T00:00:00Z');
    const recorder = createCallEventRecorder({ db, retentionDays: 30, now: () => now });
    recorder.record(event(gamma, 'old', { at: new Date('2026-04-01T00:00:00Z') }));
    recorder.record(event(gamma, 'recent', { at: new Date('2026-05-30T00:00:00Z') }));
    await recorder.flush();
    assert.equal(await recorder.prune(), 1);
    assert.deepEqual(await stored(gamma), ['recent']);
    await recorder.close();
    const keepAll = createCallEventRecorder({ db, retentionDays: 0, now: () => new Date('2030-01-01T00:00:00Z') });
    assert.equal(await keepAll.prune(), 0);
    assert.deepEqual(await stored(gamma), ['recent']);
    await keepAll.close();
  });

  it('aggregates per plugin and per tool over a window, with percentile_cont latencies', async () => {
    const recorder = createCallEventRecorder({ db, flushMs: 60_000 });
    const now = Date.now();
    // alpha/search: ten successes, 10..100 ms.
    for (let index = 1; index <= 10; index += 1) recorder.record(event(alpha, 'search', { latencyMs: index * 10, at: new Date(now - index * 1_000) }));
    recorder.record(event(alpha, 'write', { outcome: 'error', errorClass: 'tool_error', latencyMs: 200, at: new Date(now - 500) }));
    recorder.record(event(alpha, 'write', { outcome: 'error', errorClass: 'tool_error', latencyMs: 300, at: new Date(now - 400) }));
    recorder.record(event(alpha, 'write', { outcome: 'timeout', errorClass: 'timeout', latencyMs: 1_000, at: new Date(now - 300) }));
    recorder.record(event(alpha, 'write', { outcome: 'rejected', errorClass: 'circuit_open', latencyMs: 0, at: new Date(now - 200) }));
    recorder.record(event(alpha, 'write', { outcome: 'error', latencyMs: 1, at: new Date(now - 100) }));
    // Outside a 1 h window.
    recorder.record(event(alpha, 'search', { latencyMs: 99_999, at: new Date(now - 2 * 3_600_000) }));
    recorder.record(event(beta, 'ping', { latencyMs: 7, at: new Date(now - 1_000), sessionId: 'session-1' }));
    await recorder.close();

    const window = { since: new Date(now - 3_600_000), until: new Date(now + 1) };
    const all = await pluginCallAggregates(db, window);
    assert.deepEqual(all.map((row) => row.pluginName), ['alpha', 'beta']);
    const a = all[0]!;
    assert.equal(a.pluginId, alpha);
    assert.deepEqual(
      { calls: a.calls, successes: a.successes, errors: a.errors, timeouts: a.timeouts, rejected: a.rejected },
      { calls: 15, successes: 10, errors: 3, timeouts: 1, rejected: 1 },
    );
    assert.deepEqual(a.errorClasses, { tool_error: 2, circuit_open: 1, timeout: 1, unknown: 1 });
    // percentile_cont over 0,1,10..100,200,300,1000 (15 values): interpolated, identical on both engines.
    assert.equal(a.p50LatencyMs, 60);
    assert.ok(Math.abs(a.p95LatencyMs! - 510) < 1e-9, String(a.p95LatencyMs));
    assert.equal(a.lastCallAt?.getTime(), now - 100);

    const onlyBeta = await pluginCallAggregates(db, { ...window, pluginIds: [beta] });
    assert.deepEqual(onlyBeta.map((row) => [row.pluginName, row.calls, row.p50LatencyMs, row.errorClasses]), [['beta', 1, 7, {}]]);
    assert.deepEqual(await pluginCallAggregates(db, { ...window, pluginIds: [] }), []);
    const wide = await pluginCallAggregates(db, { since: new Date(now - 3 * 3_600_000), until: window.until, pluginIds: [alpha] });
    assert.equal(wide[0]!.calls, 16);

    const tools = await toolCallAggregates(db, alpha, window);
    assert.deepEqual(tools.map((row) => [row.toolName, row.calls, row.successes]), [['search', 10, 10], ['write', 5, 0]]);
    assert.equal(tools[0]!.p50LatencyMs, 55);
    assert.ok(Math.abs(tools[0]!.p95LatencyMs! - 95.5) < 1e-9);
    assert.deepEqual(tools[1]!.errorClasses, { tool_error: 2, circuit_open: 1, timeout: 1, unknown: 1 });
    assert.deepEqual(await toolCallAggregates(db, beta, { since: new Date(now - 10), until: window.until }), []);

    // Removing a plugin removes its events (ON DELETE CASCADE).
    await db.query('DELETE FROM plugins WHERE id = $1', [beta]);
    assert.deepEqual((await pluginCallAggregates(db, window)).map((row) => row.pluginName), ['alpha']);
  });
});
