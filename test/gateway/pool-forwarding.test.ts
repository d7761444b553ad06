/**
 * Issue #12 "Forwarding", the pool's half, on the real supervisor with real plugin processes
 * (the forwarding fixture plugin): a session whose client answers requests never shares a
 * connection with another session while its calls run, so the pool starts another process up
 * to `poolSize`, or the call waits its turn; sessions without those capabilities share one
 * connection, and then a plugin request cannot be attributed and is refused, not misdelivered.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import type { CallerCapabilities, CallerLink, ForwardedRequest } from '../../src/runtime/supervisor/session-routing.ts';
import type { UpstreamSpecInput } from '../../src/runtime/types.ts';
import { createForwardingPluginFolder } from '../e2e/fixtures/forwarding-server.ts';
import { fixtureSpec } from '../runtime/helpers.ts';

const capable: CallerCapabilities = { sampling: {}, elicitation: { form: {} } };

/** A caller whose requests go to `answer`, recording what it was asked. */
function caller(sessionId: string, capabilities: CallerCapabilities, answer: (request: ForwardedRequest) => Promise<Record<string, unknown>>) {
  const asked: ForwardedRequest[] = [];
  const link: CallerLink = {
    sessionId,
    capabilities,
    logLevel: () => undefined,
    async request(request) {
      asked.push(request);
      return answer(request);
    },
    notify: async () => undefined,
  };
  return { link, asked };
}

/** The answer a client gives: the sampling text or the elicitation content names the session. */
function answerAs(tag: string) {
  return async (request: ForwardedRequest): Promise<Record<string, unknown>> =>
    request.method === 'sampling/createMessage' ? { role: 'assistant', content: { type: 'text', text: tag }, model: 'test' } : { action: 'accept', content: { name: tag } };
}

const jsonOf = (result: CallToolResult): Record<string, any> => JSON.parse((result.content[0] as { text: string }).text) as Record<string, any>;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('pooled connections and per-session forwarding (issue #12)', () => {
  let root: string;
  let spec: UpstreamSpecInput;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-pool-forwarding-'));
    chmodSync(root, 0o755);
    const folder = await createForwardingPluginFolder(root, 'fwd');
    spec = fixtureSpec('fwd', { script: join(folder, 'server.mjs'), cwd: folder });
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('two capable sessions run at once on two processes (poolSize 2), each asked only its own questions', { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ poolSize: 2, stopGraceMs: 200 });
    try {
      // Each client holds its sampling answer until the other one has been asked too: only
      // possible if both calls run at once, so on two connections.
      const bothAsked = [deferred(), deferred()];
      const sessions = ['A', 'B'].map((tag, i) =>
        caller(`session-${tag}`, capable, async (request) => {
          if (request.method === 'sampling/createMessage') {
            bothAsked[i]!.resolve();
            await Promise.race([Promise.all(bothAsked.map((d) => d.promise)), new Promise((_, reject) => setTimeout(() => reject(new Error('the other session never ran concurrently')), 15_000))]);
          }
          return answerAs(tag)(request);
        }),
      );
      const results = await Promise.all(sessions.map(({ link }, i) => supervisor.callTool(spec, 'ask', { tag: ['A', 'B'][i] }, { caller: link })));
      results.forEach((result, i) => {
        const tag = ['A', 'B'][i]!;
        assert.equal(jsonOf(result)['sampling'].result.content.text, tag);
        assert.deepEqual(jsonOf(result)['elicitation'].result.content, { name: tag });
        assert.deepEqual(sessions[i]!.asked.map((request) => request.method), ['sampling/createMessage', 'elicitation/create']);
        assert.match(JSON.stringify(sessions[i]!.asked), new RegExp(`for ${tag}"`));
      });
      assert.equal(supervisor.processes().length, 2);
    } finally {
      await supervisor.close();
    }
  });

  it('with one process, a capable session waits its turn instead of sharing; sharing sessions are refused, not misdelivered', { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ poolSize: 1, stopGraceMs: 200 });
    try {
      const release = deferred();
      const first = caller('session-A', capable, async (request) => {
        await release.promise;
        return answerAs('A')(request);
      });
      const second = caller('session-B', capable, answerAs('B'));
      const callA = supervisor.callTool(spec, 'ask', { tag: 'A' }, { caller: first.link });
      while (first.asked.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      let bFinished = false;
      const callB = supervisor.callTool(spec, 'ask', { tag: 'B' }, { caller: second.link }).finally(() => (bFinished = true));
      await new Promise((resolve) => setTimeout(resolve, 500));
      // B has not reached the plugin: A holds the only connection while its form is open.
      assert.equal(second.asked.length, 0);
      assert.equal(bFinished, false);
      release.resolve();
      const [a, b] = await Promise.all([callA, callB]);
      assert.deepEqual(jsonOf(a)['elicitation'].result.content, { name: 'A' });
      assert.deepEqual(jsonOf(b)['elicitation'].result.content, { name: 'B' });
      assert.equal(supervisor.processes().length, 1);

      // Two sessions without those capabilities share the connection; while both are in
      // flight, a plugin request has no single owner and is refused for both.
      const holding = new AbortController();
      const plainC = caller('session-C', {}, answerAs('C'));
      const plainD = caller('session-D', {}, answerAs('D'));
      const held = supervisor.callTool(spec, 'hold', {}, { caller: plainC.link, signal: holding.signal });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const refused = jsonOf(await supervisor.callTool(spec, 'ask', { tag: 'D' }, { caller: plainD.link }));
      assert.match(refused['sampling'].error.message, /calls of several callers are in flight on this shared connection/);
      assert.equal(plainC.asked.length + plainD.asked.length, 0);
      holding.abort();
      await assert.rejects(held, /cancelled/);
    } finally {
      await supervisor.close();
    }
  });

  it("Quiver's own requests (a tools/list, an API read without a session) never join a connection a session has to itself, so its sampling stays attributable", { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ poolSize: 1, stopGraceMs: 200 });
    try {
      const release = deferred();
      const session = caller('session-A', capable, async (request) => {
        await release.promise;
        return answerAs('A')(request);
      });
      const callA = supervisor.callTool(spec, 'ask', { tag: 'A' }, { caller: session.link });
      while (session.asked.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // While A's sampling answer is pending, requests without a caller wait for the connection.
      let listed = false;
      const listing = supervisor.listTools(spec).then((tools) => ((listed = true), tools));
      const anonymousRead = supervisor.readResource(spec, 'fwd://sampled');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(listed, false, 'a tools/list without a session ran beside the session that holds the connection');
      release.resolve();
      const answered = jsonOf(await callA);
      // Both of A's requests reached A: neither was refused as "several callers in flight".
      assert.equal(answered['sampling'].result.content.text, 'A');
      assert.deepEqual(answered['elicitation'].result.content, { name: 'A' });
      assert.ok((await listing).some((tool) => tool.name === 'ask'));
      const read = JSON.parse(((await anonymousRead).contents[0] as { text: string }).text) as Record<string, any>;
      assert.match(read['error'].message, /Quiver cannot forward sampling\/createMessage from plugin 'fwd'/);
      assert.equal(session.asked.length, 2, 'the anonymous read was never attributed to A');
    } finally {
      await supervisor.close();
    }
  });

  it("a session's resources/read holds its connection too: the plugin's request during the read reaches that session", { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    try {
      const reader = caller('session-R', capable, answerAs('R'));
      const read = await supervisor.readResource(spec, 'fwd://sampled', { caller: reader.link });
      const outcome = JSON.parse((read.contents[0] as { text: string }).text) as Record<string, any>;
      assert.equal(outcome['result'].content.text, 'R');
      assert.deepEqual(reader.asked.map((request) => request.method), ['sampling/createMessage']);
      // Without a session (an API read), there is no client to ask: refused, not misdelivered.
      const anonymous = JSON.parse(((await supervisor.readResource(spec, 'fwd://sampled')).contents[0] as { text: string }).text) as Record<string, any>;
      assert.match(anonymous['error'].message, /cannot forward sampling\/createMessage from plugin 'fwd'/);
    } finally {
      await supervisor.close();
    }
  });

  it("a session's completion/complete holds its connection too; without a session the plugin's request is refused", { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    try {
      const params = { ref: { type: 'ref/prompt' as const, name: 'progress' }, argument: { name: 'tag', value: 'x' } };
      const completer = caller('session-K', capable, answerAs('K'));
      assert.deepEqual((await supervisor.complete(spec, params, { caller: completer.link })).completion.values, ['K']);
      assert.deepEqual(completer.asked.map((request) => request.method), ['sampling/createMessage']);
      const [anonymous] = (await supervisor.complete(spec, params)).completion.values;
      assert.match(anonymous!, /^refused: .*cannot forward sampling\/createMessage from plugin 'fwd'/);
    } finally {
      await supervisor.close();
    }
  });

  it('progress of a read or a prompt reaches only its own request, under a token of Quiver\'s own', { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    try {
      const heard: Record<string, Array<[number, string | undefined]>> = { read: [], prompt: [], quiet: [] };
      const listen = (name: string) => (progress: { progress: number; message?: string }) => void heard[name]!.push([progress.progress, progress.message]);
      const [read, prompt, quiet] = await Promise.all([
        supervisor.readResource(spec, 'fwd://progress', { onProgress: listen('read') }),
        supervisor.getPrompt(spec, 'progress', { tag: 'P' }, { onProgress: listen('prompt') }),
        supervisor.getPrompt(spec, 'progress', { tag: 'Q' }),
      ]);
      const tokens = [(read.contents[0] as { text: string }).text, ...[prompt, quiet].map((result) => (result.messages[0]!.content as { text: string }).text)].map((text) => JSON.parse(text).token);
      assert.match(tokens[0], /^quiver-/);
      assert.match(tokens[1], /^quiver-/);
      assert.notEqual(tokens[0], tokens[1]);
      assert.equal(tokens[2], null, 'no progress asked, no token sent');
      assert.deepEqual(heard, { read: [[1, 'read step 1'], [2, 'read step 2']], prompt: [[1, 'P step 1'], [2, 'P step 2']], quiet: [] });
    } finally {
      await supervisor.close();
    }
  });

  it("a task's status notifications reach the listener of that task only", { timeout: 45_000 }, async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    try {
      const heard: string[] = [];
      const tasks = await Promise.all(
        ['one', 'two'].map((name) => supervisor.createToolTask(spec, 'slow_task', {}, { ttl: 60_000 }, { onStatus: (status) => void heard.push(`${name} ${status.taskId} ${status.status}`) })),
      );
      await Promise.all(tasks.map((task) => task.result()));
      for (let i = 0; i < 50 && heard.length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(heard.sort(), [`one ${tasks[0]!.created.taskId} completed`, `two ${tasks[1]!.created.taskId} completed`]);
    } finally {
      await supervisor.close();
    }
  });
});
