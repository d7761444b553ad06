/**
 * Plan steps (issue #25): a top tool that needs an opaque value the request does not carry pulls
 * in the tool that produces it. The file-system case uses the real tools/list of
 * @modelcontextprotocol/server-filesystem (test/fixtures/retrieval); the coordinates case is a
 * hand-written catalog shaped like a weather server that takes latitude/longitude.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { RetrievalDocument } from '../document.ts';
import { createRetrievalIndex } from '../retrieval-index.ts';
import { buildPlanSteps, kindOfName, requestCarries } from './plan-steps.ts';

interface FixtureTool { name: string; description?: string; inputSchema: Record<string, unknown> }
const fixture = JSON.parse(readFileSync(new URL('../../../test/fixtures/retrieval/real-mcp-tools.json', import.meta.url), 'utf8')) as {
  servers: Record<string, { tools: FixtureTool[] }>;
};
const realTools: RetrievalDocument[] = Object.values(fixture.servers).flatMap(({ tools }) =>
  tools.map((tool) => ({ id: tool.name, name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema })),
);

async function top(documents: RetrievalDocument[], query: string, planSteps: boolean, k = 5): Promise<string[]> {
  const index = createRetrievalIndex({ options: { planSteps } });
  await index.build(documents);
  return (await index.search(query, { k })).results.map((r) => r.id);
}

const schema = (required: Record<string, string>) => ({
  type: 'object',
  properties: Object.fromEntries(Object.entries(required).map(([name, description]) => [name, { type: 'string', description }])),
  required: Object.keys(required),
});
const weatherCatalog: RetrievalDocument[] = [
  { id: 'forecast', name: 'get_forecast', description: 'Weather forecast (temperature, rain, wind) for the next days at a point', parameters: schema({ latitude: 'Latitude', longitude: 'Longitude' }) },
  { id: 'geocode', name: 'geocode', description: 'Convert a place name or address into geographic coordinates (latitude and longitude)', parameters: schema({ address: 'Place or address' }) },
  { id: 'air', name: 'air_quality', description: 'Air quality index of a city', parameters: schema({ city: 'City name' }) },
  { id: 'alerts', name: 'weather_alerts', description: 'Active weather alerts for a US state', parameters: schema({ state: 'Two-letter state code' }) },
  { id: 'news', name: 'news_search', description: 'Search news articles about a topic', parameters: schema({ query: 'Topic' }) },
  { id: 'translate', name: 'translate_text', description: 'Translate text into another language', parameters: schema({ text: 'Text', target: 'Language' }) },
];

describe('plan steps: parameter-type chaining', () => {
  it('reads kinds from parameter and output names, and only opaque ones', () => {
    assert.equal(kindOfName('latitude', []), 'coordinates');
    assert.equal(kindOfName('originLng', []), 'coordinates');
    assert.equal(kindOfName('file_path', []), 'path');
    assert.equal(kindOfName('imageUrl', []), 'url');
    assert.equal(kindOfName('patient_id', []), 'id:patient');
    assert.equal(kindOfName('id', ['order']), 'id:order');
    for (const plain of ['location', 'country', 'text', 'name', 'city', 'query']) assert.equal(kindOfName(plain, ['tool']), undefined, plain);
  });

  it('sees a value the request carries', () => {
    assert.equal(requestCarries('weather at 45.76, 4.83 tomorrow', 'coordinates'), true);
    assert.equal(requestCarries('weather at latitude 45.7 tomorrow', 'coordinates'), true);
    assert.equal(requestCarries('will it rain in Lyon tomorrow', 'coordinates'), false);
    assert.equal(requestCarries('read config/app.json', 'path'), true);
    assert.equal(requestCarries('read the config file of my app', 'path'), false);
    assert.equal(requestCarries('cancel order 4471', 'id:order'), true);
    assert.equal(requestCarries('cancel my last order', 'id:order'), false);
  });

  it('a forecast that needs coordinates pulls in the geocoder, unless the request gives them', async () => {
    const without = await top(weatherCatalog, 'Will it rain in Lyon tomorrow?', false, 3);
    const withSteps = await top(weatherCatalog, 'Will it rain in Lyon tomorrow?', true, 3);
    assert.equal(withSteps[0], 'forecast');
    assert.ok(!without.includes('geocode'), `control: ${without.join(', ')}`);
    assert.ok(withSteps.includes('geocode'), withSteps.join(', '));
    assert.ok(!(await top(weatherCatalog, 'Will it rain at 45.76, 4.83 tomorrow?', true, 3)).includes('geocode'));
    // A tool far below the best is no consumer: a translation request pulls nothing in.
    const translate = 'Translate "good morning" into Italian';
    assert.deepEqual(await top(weatherCatalog, translate, true, 6), await top(weatherCatalog, translate, false, 6));
  });

  it('over the real file-system server: reading a file named only in words brings the file search', async () => {
    const query = 'read the config file of my app and change the port to 8080';
    const control = await top(realTools, query, false);
    const withSteps = await top(realTools, query, true);
    assert.ok(!control.includes('search_files'), control.join(', '));
    assert.ok(withSteps.includes('search_files'), withSteps.join(', '));
    assert.deepEqual(withSteps.slice(0, 2), control.slice(0, 2), 'the requested tools keep their places');
    // With the path in the request there is nothing to find first.
    assert.ok(!(await top(realTools, 'read config/app.json and change the port to 8080', true)).includes('search_files'));
  });

  it('an output schema names what a tool returns; an id producer must match the request', async () => {
    const shop: RetrievalDocument[] = [
      { id: 'cancel', name: 'cancelOrder', description: 'Cancel an order', parameters: schema({ order_id: 'The order' }) },
      { id: 'orders', name: 'listOrders', description: 'List the customer orders, newest first', parameters: schema({}), outputs: { orders: { type: 'list' }, order_id: { type: 'str' } } },
      { id: 'create', name: 'createInvoice', description: 'Create an invoice', parameters: schema({ amount: 'Amount' }), outputs: { invoice_id: { type: 'str' } } },
      { id: 'weather', name: 'getWeather', description: 'Weather of a city', parameters: schema({ city: 'City' }) },
    ];
    const plan = buildPlanSteps(shop)!;
    assert.deepEqual(plan.needs.get(0), ['id:order']);
    assert.deepEqual(plan.producers.get('id:order'), [1]);
    assert.deepEqual(await top(shop, 'cancel my last order', true, 2), ['cancel', 'orders']);
    assert.deepEqual((await top(shop, 'cancel order 4471', true, 2))[0], 'cancel');
    assert.ok(!(await top(shop, 'cancel order 4471', true, 2)).includes('orders') || (await top(shop, 'cancel order 4471', false, 2)).includes('orders'));
  });
});
