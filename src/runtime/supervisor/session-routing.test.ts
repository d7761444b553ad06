import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LoggingLevel, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { createDeadline } from './deadline.ts';
import { attribute, claimReleased, claimsOf as claimsOfForTest, compatible, forwardLog, forwardRequest, needsOwnConnection, registerClaim, releaseClaim, type CallClaim, type CallerCapabilities, type CallerLink } from './session-routing.ts';
import type { Instance } from './state.ts';
import { relayElicitationComplete } from './url-elicitations.ts';

const clock = { now: () => Date.now() };

/** An instance as the routing reads it: its plugin's name and redactor, and its in-flight count. */
function instance(): Instance {
  return { entry: { spec: { pluginName: 'fwd', pluginId: 'fwd' }, redact: (text: string) => text }, inFlight: 0 } as unknown as Instance;
}

function link(sessionId: string, capabilities: CallerCapabilities, level?: LoggingLevel) {
  const logs: Array<LoggingMessageNotification['params']> = [];
  const requests: string[] = [];
  const completions: string[] = [];
  const caller: CallerLink = {
    sessionId,
    capabilities,
    logLevel: () => level,
    async request(request) {
      requests.push(request.method);
      return { ok: sessionId };
    },
    async notify(notification) {
      if (notification.method === 'notifications/message') logs.push(notification.params);
      else completions.push(notification.params.elicitationId);
    },
  };
  return { caller, logs, requests, completions };
}

const deadlines: Array<{ dispose(): void }> = [];
after(() => deadlines.forEach((deadline) => deadline.dispose()));

function claim(on: Instance, caller: CallerLink | undefined, sessionId = caller?.sessionId ?? 'anonymous', exclusive = false): CallClaim {
  const made: CallClaim = { sessionId, exclusive, caller, deadline: createDeadline({ pluginId: 'fwd', pluginName: 'fwd' }, 'tools/call', 5_000, undefined, clock) };
  deadlines.push(made.deadline);
  registerClaim(on, made);
  on.inFlight += 1;
  return made;
}

describe('session routing (issue #12)', () => {
  it('keeps an exclusive session alone on a connection; other sessions may share', () => {
    const shared = instance();
    const a = link('A', {}).caller;
    claim(shared, a);
    assert.equal(compatible(shared, { sessionId: 'A', exclusive: true } as CallClaim), true, 'the same session may add calls');
    assert.equal(compatible(shared, { sessionId: 'B', exclusive: false } as CallClaim), true);
    assert.equal(compatible(shared, { sessionId: 'B', exclusive: true } as CallClaim), false);
    const held = instance();
    claim(held, link('C', { elicitation: {} }).caller, 'C', true);
    assert.equal(compatible(held, { sessionId: 'D', exclusive: false } as CallClaim), false);
    assert.equal(needsOwnConnection(link('E', { roots: { listChanged: true } }).caller), false, 'roots alone share connections (answered only when unambiguous)');
    assert.equal(needsOwnConnection(link('F', { sampling: {} }).caller), true);
    assert.equal(compatible(held, undefined), true, 'requests that are not tools/calls are not held off');
  });

  it('lets calls that cannot be asked anything share a connection whose call is paused on a 2026 client (issue #24)', async () => {
    const on = instance();
    const paused = claim(on, { ...link('P', { elicitation: {} }).caller, pauses: true }, 'P', true);
    assert.equal(compatible(on, { sessionId: 'N', exclusive: false } as CallClaim), false, 'not while the paused call runs without waiting on its client');
    paused.waitingOnClient = 1;
    assert.equal(compatible(on, { sessionId: 'N', exclusive: false } as CallClaim), true, 'a call without sampling/elicitation joins');
    assert.equal(compatible(on, { sessionId: 'X', exclusive: true } as CallClaim), false, 'a call that may be asked something still needs its own connection');
    claim(on, link('N', {}).caller);
    assert.match((attribute(on) as { problem: string }).problem, /several callers/, 'a request sent while both run is refused, never misrouted');
    // The plugin asks for sampling while both run: refused; the call that could not answer is told so (-32021 if it fails).
    const refused: string[] = [];
    const joined = [...claimsOfForTest(on)].find((item) => item.sessionId === 'N')!;
    joined.caller = { ...joined.caller!, refused: (capability) => refused.push(`N:${capability}`) };
    paused.caller = { ...paused.caller!, refused: (capability) => refused.push(`P:${capability}`) };
    await assert.rejects(forwardRequest(on, { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } }, new AbortController().signal), /several callers/);
    assert.deepEqual(refused, ['N:sampling']);
    const blocking = instance();
    claim(blocking, link('Q', { elicitation: {} }).caller, 'Q', true).waitingOnClient = 1;
    assert.equal(compatible(blocking, { sessionId: 'N', exclusive: false } as CallClaim), false, 'a 2025 session waiting on its client keeps its connection alone');
  });

  it('attributes to exactly one session, else says why', () => {
    const on = instance();
    assert.match((attribute(on) as { problem: string }).problem, /no call is in flight/);
    const a = claim(on, link('A', {}).caller);
    claim(on, link('A', {}).caller);
    assert.equal((attribute(on) as { claim: CallClaim }).claim.sessionId, 'A');
    on.inFlight += 1; // e.g. a resources/read of someone else
    assert.match((attribute(on) as { problem: string }).problem, /several callers/);
    on.inFlight -= 1;
    const b = claim(on, link('B', {}).caller);
    assert.match((attribute(on) as { problem: string }).problem, /several callers/);
    releaseClaim(on, b);
    on.inFlight -= 1;
    releaseClaim(on, a);
    on.inFlight -= 1;
    assert.equal((attribute(on) as { claim: CallClaim }).claim.sessionId, 'A');
  });

  it('refuses a request the calling client did not declare, and forwards one it did', async () => {
    const on = instance();
    const plain = link('A', { sampling: {}, elicitation: { form: {} } });
    claim(on, plain.caller);
    const signal = new AbortController().signal;
    assert.deepEqual(await forwardRequest(on, { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } }, signal), { ok: 'A' });
    await assert.rejects(forwardRequest(on, { method: 'sampling/createMessage', params: { tools: [] } }, signal), /did not declare 'sampling.tools'/);
    await assert.rejects(forwardRequest(on, { method: 'elicitation/create', params: { mode: 'url', url: 'https://x' } }, signal), /did not declare 'elicitation.url'/);
    await assert.rejects(forwardRequest(on, { method: 'roots/list' }, signal), /did not declare the 'roots' capability/);
    await assert.rejects(forwardRequest(on, { method: 'elicitation/create', params: { task: {} } }, signal), /task-augmented/);
    assert.deepEqual(plain.requests, ['sampling/createMessage']);
    // A bare `elicitation: {}` is form mode.
    const legacy = instance();
    claim(legacy, link('L', { elicitation: {} }).caller);
    assert.deepEqual(await forwardRequest(legacy, { method: 'elicitation/create', params: { message: 'm', requestedSchema: {} } }, signal), { ok: 'L' });
  });

  it('relays a URL elicitation\'s completion to the session that got it, even after its call ended; drops ids it cannot place', async () => {
    const on = instance();
    const urlCapable = { elicitation: { url: {} } };
    const a = link('A', urlCapable);
    const b = link('B', urlCapable);
    const signal = new AbortController().signal;
    const url = (elicitationId: string) => ({ method: 'elicitation/create' as const, params: { mode: 'url', message: 'm', url: 'https://example.com/x', elicitationId } });
    const claimA = claim(on, a.caller);
    await forwardRequest(on, url('e1'), signal);
    await forwardRequest(on, url('shared'), signal);
    releaseClaim(on, claimA);
    on.inFlight -= 1;
    // A's call is over and B's runs now: the completion still belongs to A.
    claim(on, b.caller);
    await forwardRequest(on, url('shared'), signal);
    const lines: string[] = [];
    const capture = { ...silentLogger, debug: (context: object, message?: string) => void lines.push(`${message} ${JSON.stringify(context)}`) } as Logger;
    for (const id of ['e1', 'e1', 'never-asked', 'shared']) relayElicitationComplete(on, { elicitationId: id }, capture);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(a.completions, ['e1'], 'once, to A');
    assert.deepEqual(b.completions, [], 'an id the plugin gave two sessions reaches neither');
    assert.equal(lines.length, 3);
    assert.match(lines.join('\n'), /dropped.*never-asked.*unknown elicitation id/);
    assert.match(lines.join('\n'), /dropped.*shared.*more than one session/);
    // A refused elicitation is not remembered.
    const plain = link('C', {});
    const other = instance();
    claim(other, plain.caller);
    await assert.rejects(forwardRequest(other, url('e2'), signal), /elicitation/);
    relayElicitationComplete(other, { elicitationId: 'e2' }, silentLogger);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(plain.completions, []);
  });

  it("forwards log messages at the session's level, naming the plugin; unattributable ones go to Quiver's log", async () => {
    const on = instance();
    const session = link('A', {}, 'warning');
    claim(on, session.caller);
    forwardLog(on, { level: 'info', data: 'quiet' }, silentLogger);
    forwardLog(on, { level: 'error', data: 'loud' }, silentLogger);
    forwardLog(on, { level: 'critical', logger: 'db', data: 'louder' }, silentLogger);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(session.logs, [
      { level: 'error', logger: 'fwd', data: 'loud' },
      { level: 'critical', logger: 'fwd/db', data: 'louder' },
    ]);
    const other = link('B', {});
    claim(on, other.caller);
    const lines: string[] = [];
    const capture = { ...silentLogger, info: (context: object, message?: string) => void lines.push(`${message} ${JSON.stringify(context)}`) } as Logger;
    forwardLog(on, { level: 'error', data: 'whose?' }, capture);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(session.logs.length, 2);
    assert.equal(other.logs.length, 0);
    assert.match(lines[0]!, /not forwarded.*whose\?/);
  });

  it('wakes a caller waiting its turn when a call on the plugin ends, and stops waiting on abort', async () => {
    const on = instance();
    const made = claim(on, link('A', {}).caller);
    const started = Date.now();
    const woken = claimReleased(on.entry, new AbortController().signal, 10_000);
    setTimeout(() => releaseClaim(on, made), 50);
    await woken;
    assert.ok(Date.now() - started < 5_000, 'woken by the release, not the fallback timer');
    const controller = new AbortController();
    const waiting = claimReleased(on.entry, controller.signal, 10_000);
    controller.abort(new Error('caller gave up'));
    await assert.rejects(waiting, /caller gave up/);
  });

  it("stops the call's deadline while any of its requests waits on the client", async () => {
    const on = instance();
    const waits = [100, 450];
    const caller: CallerLink = {
      sessionId: 'A',
      capabilities: { sampling: {} },
      logLevel: () => undefined,
      request: (_request, options) =>
        new Promise((resolve, reject) => {
          const wait = waits.shift()!;
          const timer = setTimeout(() => resolve({ waited: wait }), wait);
          options.signal.addEventListener('abort', () => (clearTimeout(timer), reject(options.signal.reason)), { once: true });
        }),
      notify: async () => undefined,
    };
    const made: CallClaim = { sessionId: 'A', exclusive: true, caller, deadline: createDeadline({ pluginId: 'fwd', pluginName: 'fwd' }, 'tools/call', 200, undefined, clock) };
    deadlines.push(made.deadline);
    registerClaim(on, made);
    on.inFlight += 1;
    const signal = new AbortController().signal;
    const sampling = { method: 'sampling/createMessage' as const, params: { messages: [], maxTokens: 1 } };
    // Two parallel requests: the first answer must not restart the clock while the second waits.
    const answers = await Promise.all([forwardRequest(on, sampling, signal), forwardRequest(on, sampling, signal)]);
    assert.deepEqual(answers, [{ waited: 100 }, { waited: 450 }]);
    assert.equal(made.deadline.timedOut(), false);
    assert.ok(made.deadline.remaining() > 100, 'the full timeout again once the client has answered');
  });
});
