/**
 * What keeps a connection alive (`Instance.holds`: resource subscriptions, tool tasks) is not a
 * request in flight: while a subscription holds the connection, a session's call on it still
 * owns the plugin's sampling and elicitation requests (before, the subscription counted as an
 * unclaimed request and every plugin request on that connection was refused), and the
 * connection is still in use (never stopped as idle) after the call ends.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDeadline } from './deadline.ts';
import { attribute, registerClaim, releaseClaim, type CallClaim, type CallerLink } from './session-routing.ts';
import { inUse, type Instance } from './state.ts';

const clock = { now: () => Date.now() };
const deadline = createDeadline({ pluginId: 'p', pluginName: 'p' }, 'tools/call', 5_000, undefined, clock);
after(() => deadline.dispose());

const caller: CallerLink = {
  sessionId: 'session-A',
  capabilities: { sampling: {} },
  logLevel: () => undefined,
  request: async () => ({}),
  notify: async () => undefined,
};

describe('connection holds beside requests in flight', () => {
  it('a subscription-held connection attributes its one call and stays in use after it', () => {
    const instance = { entry: { spec: { pluginName: 'p', pluginId: 'p' } }, inFlight: 0, holds: 1 } as unknown as Instance;
    assert.equal(inUse(instance), true, 'a held connection is in use with no request in flight');
    const claim: CallClaim = { sessionId: caller.sessionId, exclusive: true, caller, deadline };
    registerClaim(instance, claim);
    instance.inFlight += 1;
    const target = attribute(instance);
    assert.ok('claim' in target, `the call's session owns the plugin's requests: ${JSON.stringify(target)}`);
    assert.equal(target.claim.sessionId, 'session-A');
    releaseClaim(instance, claim);
    instance.inFlight -= 1;
    assert.equal(inUse(instance), true);
    instance.holds -= 1;
    assert.equal(inUse(instance), false);
  });
});
