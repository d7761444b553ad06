/**
 * Issue #23, "what Quiver acknowledges is kept": a real `quiver serve` answers a burst of 30
 * selections, each with an event id, and is killed with SIGKILL at once (no shutdown, no flush).
 * After a restart every acknowledged id takes its outcome: 0 lost. Both databases: on PGlite the
 * events are journaled in the data folder before the id goes out and written by the next start;
 * on PostgreSQL each is a row before the answer.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { startServe, stopChild } from '../helpers/cli.ts';

const KEY_LINE = /Created the first admin API key[^\n]*\n\n\s+(\S+)\n/;
const BURST = 30;

interface Selection {
  tools: Array<{ qualifiedName: string }>;
  metadata: { eventId?: string };
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.kill('SIGKILL');
  await closed;
}

describeEachBackend('acknowledged selection events survive kill -9', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-durable-'));
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_EMBEDDER: 'offline' };
    store = await processStore(backend);
    Object.assign(env, store.env);
  });

  after(async () => {
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it(`0 of ${BURST} acknowledged event ids are lost when the server is killed right after the burst`, async () => {
    const first = await startServe(['--http', '127.0.0.1:0'], env, 180_000);
    const key = KEY_LINE.exec(first.stderr())?.[1];
    const acknowledged: Array<{ eventId: string; tool: string | undefined }> = [];
    try {
      assert.ok(key, first.stderr());
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      // Tools to select from, registered as a plugin registers itself.
      const tools = ['echo', 'reverse', 'shout'].map((name) => ({ name, description: `${name} some text back to the caller` }));
      const synced = await fetch(`${first.url}/internal/tool-registry/plugins/sync`, { method: 'POST', headers, body: JSON.stringify({ pluginId: 'echo-plugin', version: '1.0.0', tools }) });
      assert.equal(synced.status, 200, await synced.text());
      // Selections keep coming (8 at a time) until the 30th is acknowledged; the kill follows at
      // once, with the next ones still in flight, so no quiet period or shutdown writes anything.
      let sent = 0;
      let killed: Promise<void> | undefined;
      const worker = async (): Promise<void> => {
        while (killed === undefined && sent < 20 * BURST) {
          const index = sent++;
          let selection: Selection;
          try {
            const answer = await fetch(`${first.url}/v1/select`, { method: 'POST', headers, body: JSON.stringify({ query: `echo some text ${index}`, k: 3 }) });
            assert.equal(answer.status, 200);
            selection = (await answer.json()) as Selection;
          } catch (error) {
            if (killed !== undefined) return; // in flight at the kill: never acknowledged
            throw error;
          }
          if (killed !== undefined) return;
          assert.ok(selection.metadata.eventId, 'every selection is acknowledged with an event id');
          acknowledged.push({ eventId: selection.metadata.eventId, tool: selection.tools[0]?.qualifiedName });
          if (acknowledged.length === BURST) killed = killHard(first.child);
        }
      };
      await Promise.all(Array.from({ length: 8 }, () => worker()));
      await killed;
    } finally {
      // No SIGTERM: nothing may be flushed on the way out.
      await killHard(first.child);
    }
    assert.equal(acknowledged.length, BURST);

    const second = await startServe(['--http', '127.0.0.1:0'], env, 180_000);
    try {
      assert.ok(key);
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const statuses: number[] = [];
      for (const { eventId, tool } of acknowledged) {
        const answer = await fetch(`${second.url}/v1/outcomes`, { method: 'POST', headers, body: JSON.stringify({ eventId, toolsCalled: tool ? [tool] : [], success: true }) });
        statuses.push(answer.status);
      }
      const lost = statuses.filter((status) => status !== 200).length;
      assert.equal(lost, 0, `outcomes refused after the kill: ${lost} of ${BURST} (statuses ${statuses.join(',')})`);
    } finally {
      assert.equal(await stopChild(second.child), 0);
    }
  });
});
