/**
 * Issue #12: `resources/subscribe` / `unsubscribe` through the production gateway over
 * Streamable HTTP to a real plugin process, on both databases. Sessions sharing the plugin's
 * one connection share one upstream subscription (the plugin sees a single subscribe, and an
 * unsubscribe only when the last session leaves, or closes); `notifications/resources/updated`
 * reaches only the subscribed sessions, each under the URI it subscribed with.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { startSurfaceGateway, type SurfaceGateway } from './fixtures/surface-gateway.ts';

/** Collects the resource updates a client receives. */
function updatesOf(client: Client): string[] {
  const seen: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => void seen.push(notification.params.uri));
  return seen;
}

/** What the plugin says it received. */
async function pluginStats(client: Client, name: string): Promise<{ subscribes: number; unsubscribes: number; subscribed: string[] }> {
  const result = (await client.callTool({ name })) as CallToolResult;
  return JSON.parse((result.content[0] as { text: string }).text) as { subscribes: number; unsubscribes: number; subscribed: string[] };
}

/** Waits until `check` holds (notifications arrive on their own stream), at most ~3 s. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 60 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(check(), what);
}

/** Gives a notification that must NOT arrive the time to arrive anyway. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describeEachBackend('resource subscriptions through the gateway', (backend) => {
  let surface: SurfaceGateway;
  before(async () => {
    surface = await startSurfaceGateway(await backend.open());
  });
  after(async () => {
    await surface?.close();
  });

  it('two sessions share one upstream subscription; updates reach only subscribers, under their own URIs', async () => {
    const prefixed = await surface.connect('default', { name: 'prefixed' });
    const native = await surface.connect('native', { name: 'native' });
    const bystander = await surface.connect('default', { name: 'bystander' });
    const [prefixedUpdates, nativeUpdates, bystanderUpdates] = [updatesOf(prefixed), updatesOf(native), updatesOf(bystander)];
    const before = await pluginStats(prefixed, 'north__stats_north');

    assert.deepEqual(await prefixed.subscribeResource({ uri: 'quiver://north/north%3A%2F%2Fmemo' }), {});
    assert.deepEqual(await native.subscribeResource({ uri: 'north://memo' }), {});
    // A resource made from a template can be subscribed to as well.
    assert.deepEqual(await native.subscribeResource({ uri: 'north://notes/5' }), {});
    // Subscribing twice is one subscription.
    await prefixed.subscribeResource({ uri: 'quiver://north/north%3A%2F%2Fmemo' });
    const during = await pluginStats(prefixed, 'north__stats_north');
    assert.equal(during.subscribes - before.subscribes, 2, 'one upstream subscribe per URI, however many sessions');
    assert.deepEqual(during.subscribed, ['north://memo', 'north://notes/5']);

    await bystander.callTool({ name: 'north__touch_north', arguments: { uri: 'north://memo' } });
    await eventually(() => prefixedUpdates.length > 0 && nativeUpdates.length > 0, 'both subscribers told of the update');
    await settle();
    assert.deepEqual(prefixedUpdates, ['quiver://north/north%3A%2F%2Fmemo']);
    assert.deepEqual(nativeUpdates, ['north://memo']);
    assert.deepEqual(bystanderUpdates, []);

    // The first session leaves: the plugin keeps the subscription for the other.
    assert.deepEqual(await prefixed.unsubscribeResource({ uri: 'quiver://north/north%3A%2F%2Fmemo' }), {});
    assert.equal((await pluginStats(prefixed, 'north__stats_north')).unsubscribes, before.unsubscribes);
    await bystander.callTool({ name: 'north__touch_north', arguments: { uri: 'north://memo' } });
    await eventually(() => nativeUpdates.length === 2, 'the remaining subscriber told');
    await settle();
    assert.deepEqual(prefixedUpdates, ['quiver://north/north%3A%2F%2Fmemo'], 'no update after unsubscribing');

    // The last one leaves (by Quiver's form of the URI it subscribed natively): the plugin is unsubscribed.
    await native.unsubscribeResource({ uri: 'quiver://north/north%3A%2F%2Fmemo' });
    const after = await pluginStats(prefixed, 'north__stats_north');
    assert.equal(after.unsubscribes - before.unsubscribes, 1);
    assert.deepEqual(after.subscribed, ['north://notes/5']);
  });

  it("a closing session's subscriptions are dropped upstream", async () => {
    const watcher = await surface.connect('default', { name: 'watcher' });
    const reporter = await surface.connect('default', { name: 'reporter' });
    await watcher.subscribeResource({ uri: 'quiver://south/south%3A%2F%2Fmemo' });
    assert.deepEqual((await pluginStats(reporter, 'south__stats_south')).subscribed, ['south://memo']);
    // Ends the MCP session (HTTP DELETE), as a client that is done does.
    await (watcher.transport as StreamableHTTPClientTransport).terminateSession();
    await watcher.close();
    let stats = await pluginStats(reporter, 'south__stats_south');
    for (let i = 0; i < 40 && stats.subscribed.length > 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stats = await pluginStats(reporter, 'south__stats_south');
    }
    assert.deepEqual(stats.subscribed, []);
  });

  it('subscribing to an unknown resource is InvalidParams; unsubscribing from one never subscribed is fine', async () => {
    const client = await surface.connect('default');
    await assert.rejects(client.subscribeResource({ uri: 'quiver://nobody/x%3A%2F%2Fy' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.subscribeResource({ uri: 'north://memo' }), /Unknown resource: north:\/\/memo/);
    assert.deepEqual(await client.unsubscribeResource({ uri: 'quiver://south/south%3A%2F%2Fmemo' }), {});
  });
});
