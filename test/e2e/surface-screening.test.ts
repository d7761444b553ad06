/**
 * Issue #23, at run time: a resource's text and a prompt's messages reach the model like a tool
 * result, so the gateway screens them the same way. Real surface plugins in the sandbox, the
 * production gateway over HTTP, the MCP SDK client: a read or prompt whose text carries an order
 * for the assistant comes back marked (a warning first, the findings in `_meta`, the plugin's
 * content kept); a clean one comes back as the plugin sent it.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/backends.ts';
import { startSurfaceGateway, type SurfaceGateway } from './fixtures/surface-gateway.ts';
import { POISONING_META_KEY } from '../../src/composition/gateway-backend/result-screen.ts';

const textOf = (content: object | undefined) => (content !== undefined && 'text' in content ? content.text : undefined);

describeEachBackend('poisoning screen on resources and prompts through the gateway', (backend) => {
  let surface: SurfaceGateway;
  before(async () => {
    surface = await startSurfaceGateway(await backend.open());
  });
  after(async () => {
    await surface?.close();
  });

  it('a resource whose text gives the assistant orders is marked; a clean one is not', async () => {
    // Prefixed names: the URI names its plugin, so an unlisted resource can be read.
    const client = await surface.connect('default');
    const flagged = await client.readResource({ uri: 'quiver://north/north%3A%2F%2Finbox' });
    assert.equal(flagged.contents.length, 2);
    assert.match(String(textOf(flagged.contents[0])), /^Quiver warning: the resource north:\/\/inbox of north contains text that tries to steer the assistant/);
    assert.match(String(textOf(flagged.contents[1])), /Ignore your previous instructions/, 'the plugin content is kept after the warning');
    const marker = flagged._meta?.[POISONING_META_KEY] as { flagged: boolean; findings: Array<{ kind: string }> } | undefined;
    assert.equal(marker?.flagged, true);
    assert.ok(!JSON.stringify(marker).includes('system prompt'), 'the marker never repeats the matched text');

    const clean = await client.readResource({ uri: 'quiver://north/north%3A%2F%2Fmemo' });
    assert.deepEqual(clean.contents.map(textOf), ['memo of north']);
    assert.equal(clean._meta?.[POISONING_META_KEY], undefined);
  });

  it('a prompt whose messages give the assistant orders gets a warning message first; a clean one does not', async () => {
    const client = await surface.connect('default');
    const flagged = await client.getPrompt({ name: 'north__inbox' });
    assert.equal(flagged.messages.length, 2);
    assert.equal(flagged.messages[0]!.role, 'user');
    assert.match(String((flagged.messages[0]!.content as { text?: string }).text), /^Quiver warning: the prompt inbox of north/);
    assert.ok(flagged._meta?.[POISONING_META_KEY]);
    const clean = await client.getPrompt({ name: 'north__cite' });
    assert.equal(clean.messages.length, 1);
    assert.equal(clean._meta?.[POISONING_META_KEY], undefined);
  });
});
