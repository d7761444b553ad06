/**
 * The embedded database runs in a worker thread (issue #28): the event loop keeps turning while
 * PGlite works, and the Database contract (errors, transactions, notifications, close) holds
 * across the thread as it did in one thread. The contract itself is store.test.ts's, run on
 * both engines; this file covers what the thread adds.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sqlStateOf } from './database-errors.ts';
import { openPGlite, PGLITE_SETTINGS, pgliteMemory } from './pglite-database.ts';
import { PGliteThread, type PGliteOpenReply } from './pglite-thread.ts';

/** How many 5 ms timer turns the event loop ran while `work` was pending. */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  const timer = setInterval(() => turns++, 5);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
  return turns;
}

describe('PGlite in a worker thread', () => {
  it('leaves the event loop free while a statement runs', async () => {
    const db = await openPGlite();
    try {
      // Pure CPU inside PGlite (a few hundred ms); in one thread no timer can fire meanwhile.
      const turns = await turnsDuring(db.query('SELECT count(*) FROM generate_series(1, 3000000)'));
      assert.ok(turns >= 3, `the event loop turned ${turns} times while PGlite counted`);
    } finally {
      await db.close();
    }
  });

  it("reports the thread's heap and PGlite's memory, and returns results far larger than the thread's nursery", async () => {
    const db = await openPGlite();
    try {
      const before = await pgliteMemory(db);
      assert.ok(before && before.heapUsed > 0 && before.heapTotal >= before.heapUsed, JSON.stringify(before));
      assert.ok(before.wasmMemory > 0, 'PGlite\'s WebAssembly memory is read from its module');
      // ~40 MB of rows built in the thread (its young generation is 4 MB) and cloned across.
      const { rows } = await db.query<{ n: number; text: string }>("SELECT n, repeat('x', 200) || n AS text FROM generate_series(1, 200000) AS n");
      assert.equal(rows.length, 200_000);
      assert.equal(rows[199_999]!.text, `${'x'.repeat(200)}200000`);
    } finally {
      await db.close();
    }
  });

  it('runs with 2 MB of shared buffers: they live in the WebAssembly memory, which never shrinks (issue #28)', async () => {
    const db = await openPGlite();
    try {
      const { rows } = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
      assert.equal(rows[0]!.shared_buffers, '2MB');
    } finally {
      await db.close();
    }
  });

  it('keeps the engine errors: SQLSTATE, message, and the invalid-input mapping', async () => {
    const db = await openPGlite();
    try {
      await assert.rejects(db.query('SELECT * FROM no_such_table'), (error: Error & { code?: string }) => {
        assert.equal(error.code, '42P01');
        assert.match(error.message, /no_such_table/);
        return true;
      });
      await assert.rejects(db.query("SELECT 'not-a-uuid'::uuid"), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_input');
        assert.equal(sqlStateOf(error), '22P02');
        assert.doesNotMatch(error.message, /not-a-uuid/); // the refused value is not echoed
        return true;
      });
      // A parameter that cannot cross to the thread is the caller's error, and the store goes on.
      await assert.rejects(db.query('SELECT $1::text', [() => 1]), /cannot be sent to the database/);
      assert.deepEqual((await db.query('SELECT 1::int8 AS n')).rows, [{ n: 1 }]);
    } finally {
      await db.close();
    }
  });

  it('holds a transaction: outside statements wait for it, a throw rolls it back', async () => {
    const db = await openPGlite();
    try {
      await db.query('CREATE TABLE t (n int)');
      const order: string[] = [];
      let outside: Promise<unknown> | undefined;
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        outside = db.query('SELECT count(*)::int AS n FROM t').then((result) => order.push(`outside saw ${(result.rows[0] as { n: number }).n}`));
        await tx.query('INSERT INTO t VALUES (2)');
        order.push('transaction done');
      });
      await outside;
      assert.deepEqual(order, ['transaction done', 'outside saw 2']);

      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (3)');
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      assert.deepEqual((await db.query('SELECT count(*)::int AS n FROM t')).rows, [{ n: 2 }]);
    } finally {
      await db.close();
    }
  });

  it('runs a batch in order with everything else: after an open transaction, before what is sent after it', async () => {
    const db = await openPGlite();
    try {
      await db.query('CREATE TABLE t (n int)');
      const order: string[] = [];
      let batched: Promise<unknown> | undefined;
      let after: Promise<unknown> | undefined;
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        batched = db
          .batch([{ sql: 'INSERT INTO t VALUES ($1)', params: [2] }, { sql: 'SELECT count(*)::int AS n FROM t' }])
          .then((results) => order.push(`batch saw ${(results[1]!.rows[0] as { n: number }).n}`));
        after = db.query('SELECT count(*)::int AS n FROM t').then((result) => order.push(`after saw ${(result.rows[0] as { n: number }).n}`));
        await tx.query('INSERT INTO t VALUES (3)');
        order.push('transaction done');
      });
      await Promise.all([batched, after]);
      assert.deepEqual(order, ['transaction done', 'batch saw 3', 'after saw 3']);
      // A parameter that cannot be cloned: a TypeError, and nothing of the batch ran.
      await assert.rejects(db.batch([{ sql: 'INSERT INTO t VALUES (4)' }, { sql: 'SELECT $1', params: [() => 1] }]), TypeError);
      assert.deepEqual((await db.query('SELECT count(*)::int AS n FROM t')).rows, [{ n: 3 }]);
    } finally {
      await db.close();
    }
  });

  it('delivers notifications and stops after unlisten', async () => {
    const db = await openPGlite();
    try {
      const heard: string[] = [];
      const unlisten = await db.listen('thread_test', (payload) => heard.push(payload));
      await db.notify('thread_test', 'one');
      await db.query('SELECT 1'); // a round trip after the notify: its notification has crossed
      await unlisten();
      await db.notify('thread_test', 'two');
      await db.query('SELECT 1');
      assert.deepEqual(heard, ['one']);
    } finally {
      await db.close();
    }
  });

  // Issue #28: the main thread read and compiled PGlite's WebAssembly and read its bundle, and a
  // server's main thread, busy loading its modules, held the thread's start back by 0.2-0.6 s.
  it('reads and compiles PGlite in the thread, and hands the compiled modules back for the next store', async () => {
    const first = new PGliteThread();
    const second = new PGliteThread();
    try {
      const opened = await first.request<PGliteOpenReply>({ op: 'open', settings: PGLITE_SETTINGS });
      const engine = opened.engine;
      assert.ok(engine?.wasmModule instanceof WebAssembly.Module && engine.initdbWasmModule instanceof WebAssembly.Module, 'the thread answers with the modules it compiled');
      const result = await first.request<{ rows: { answer: number }[] }>({ op: 'query', sql: 'SELECT 6 * 7 AS answer', params: [] });
      assert.deepEqual(result.rows, [{ answer: 42 }]);
      // A thread given compiled modules starts from them and compiles none of its own.
      const reused = await second.request<PGliteOpenReply>({ op: 'open', ...engine, settings: PGLITE_SETTINGS });
      assert.equal(reused.engine, undefined);
      const again = await second.request<{ rows: { answer: number }[] }>({ op: 'query', sql: 'SELECT 6 * 7 AS answer', params: [] });
      assert.deepEqual(again.rows, [{ answer: 42 }]);
    } finally {
      for (const thread of [first, second]) {
        await thread.request({ op: 'close' }).catch(() => {});
        await thread.terminate();
      }
    }
  });

  it('fails requests made after close instead of hanging', async () => {
    const db = await openPGlite();
    const closing = db.close();
    const late = assert.rejects(db.query('SELECT 1'));
    await closing;
    await late;
    await assert.rejects(db.query('SELECT 1'), /closed/);
  });

  describe('process lifetime', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-pglite-thread-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const moduleUrl = new URL('./pglite-database.ts', import.meta.url).href;
    const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
    const run = (body: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { openPGlite } from ${JSON.stringify(moduleUrl)};\n${body}`], {
        cwd: projectRoot,
        encoding: 'utf8',
        timeout: 120_000,
      });

    it('keeps the process alive while the store is open, and lets it end once closed', async () => {
      // Awaiting a slow statement with nothing else scheduled must not end the process (exit
      // code 13 is Node's "unsettled top-level await"); an open store holds it like an
      // in-thread PGlite or a node-postgres pool (the jobs loop waits on unreferenced timers).
      const folder = JSON.stringify(join(dir, 'data'));
      const closed = run(`const db = await openPGlite({ dataDir: ${folder} });
const { rows } = await db.query('SELECT pg_sleep(0.2), 7 AS n');
console.log('answer', rows[0].n);
await db.close();`);
      assert.equal(closed.status, 0, `exit ${closed.status}: ${closed.stderr}`);
      assert.match(closed.stdout, /answer 7/);
      // Left open: still running after its last statement, until killed.
      const left = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { openPGlite } from ${JSON.stringify(moduleUrl)};
const db = await openPGlite({ dataDir: ${folder} });
await db.query('SELECT 1');
console.log('left open');`], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = once(left, 'exit');
      let output = '';
      left.stdout.on('data', (chunk) => (output += chunk));
      await new Promise<void>((resolve, reject) => {
        left.stdout.on('data', () => output.includes('left open') && resolve());
        void exited.then(() => reject(new Error(`exited before its statement answered: ${output}`)));
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(left.exitCode, null, 'a store left open keeps the process running');
      left.kill('SIGTERM');
      await exited;
    });
  });
});
