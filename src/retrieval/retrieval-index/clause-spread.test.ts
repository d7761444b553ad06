import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RetrievalDocument } from '../document.ts';
import { createRetrievalIndex } from '../retrieval-index.ts';
import { topK } from '../top-k.ts';
import { spreadClauses } from './clause-spread.ts';

describe('clause spread', () => {
  it('lets another clause\'s best pass a clause\'s runner-up, and writes non-increasing scores', () => {
    // Documents 0–2 come from clause 1, document 3 from clause 2.
    const final = Float32Array.from([1.3, 1.29, 1.28, 1.27]);
    const clause = Uint16Array.from([1, 1, 1, 2]);
    spreadClauses(final, [0, 1, 2, 3], clause, 0.03);
    const order = topK(final, 4, Int32Array.from([0, 1, 2, 3]), undefined);
    assert.deepEqual(order, [0, 3, 1, 2]);
    for (let i = 1; i < order.length; i++) assert.ok(final[order[i]!]! <= final[order[i - 1]!]!);
  });

  it('leaves a clear gap alone: the penalty is a small share of the best score', () => {
    const final = Float32Array.from([1.3, 1.2, 0.5]);
    spreadClauses(final, [0, 1, 2], Uint16Array.from([1, 1, 2]), 0.03);
    assert.deepEqual(topK(final, 3, Int32Array.from([0, 1, 2]), undefined), [0, 1, 2]);
  });

  it('in a search, a second intent reaches a small k past the first intent\'s near-duplicates', async () => {
    const documents: RetrievalDocument[] = [
      { id: 'gdp', name: 'getCountryGDP', description: 'Get the GDP of a country for a year' },
      { id: 'gdp-sector', name: 'getPublicSectorGDP', description: 'Get the public sector share of the GDP of a country for a year' },
      { id: 'gdp-growth', name: 'getGDPGrowth', description: 'Get the GDP growth rate of a country for a year' },
      { id: 'energy', name: 'getEnergyInnovationStatus', description: 'Status of energy innovation' },
      { id: 'weather', name: 'getWeather', description: 'Weather forecast of a city' },
    ];
    const query = 'Please provide the GDP of the United States for the year 2021. Finally, provide the current status of energy innovation.';
    const ranked = async (clauseSpread: number) => {
      const index = createRetrievalIndex({ options: { clauseSpread } });
      await index.build(documents);
      return (await index.search(query, { k: 5 })).results.map((r) => r.id);
    };
    const without = await ranked(0);
    const withSpread = await ranked(0.03);
    assert.deepEqual(new Set(withSpread), new Set(without), 'the same tools, reordered');
    assert.ok(withSpread.indexOf('energy') <= without.indexOf('energy'));
    assert.ok(withSpread.slice(0, 2).includes('energy') && withSpread.slice(0, 2).includes('gdp'), withSpread.join(', '));
  });
});
