import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RetrievalDocument } from '../document.ts';
import { createRetrievalIndex } from '../retrieval-index.ts';
import { terms } from '../tokenizer.ts';
import type { LearnedExampleField } from './learned-field.ts';

const tools: RetrievalDocument[] = [
  { id: 'forecast', name: 'forecast', description: 'Weather forecast for a city: temperature, rain and wind for the coming days.' },
  { id: 'history', name: 'weather_history', description: 'Past weather records for a city: temperature and rain on a given date.' },
  { id: 'pollen', name: 'pollen_report', description: 'Pollen counts and allergy risk for a region.' },
  { id: 'mail', name: 'send_mail', description: 'Send an email message to a recipient.' },
];

/** A field holding `requests` for one tool, each counted once. */
function fieldOf(entries: Record<string, string[]>): LearnedExampleField {
  const map = new Map<string, { frequency: Map<string, number>; length: number }>();
  for (const [toolId, requests] of Object.entries(entries)) {
    const frequency = new Map<string, number>();
    let length = 0;
    for (const request of requests) {
      for (const term of terms(request)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
      length += terms(request).length;
    }
    map.set(toolId, { frequency, length });
  }
  return { tools: map };
}

describe('learned example field (issue #25)', () => {
  const learned = {
    history: ['was it raining in Lyon last tuesday', 'how cold was it in Oslo yesterday'],
    pollen: ['will my hay fever be bad tomorrow'],
  };

  it('scores learned requests exactly as the same requests written in the example field', async () => {
    const shared = createRetrievalIndex({ options: { conceptWeight: 0 } });
    await shared.build(tools);
    const written = createRetrievalIndex({ options: { conceptWeight: 0 } });
    await written.build(tools.map((tool) => ({ ...tool, exampleQueries: learned[tool.id as keyof typeof learned] ?? [] })));
    for (const request of ['was it raining in Paris yesterday', 'hay fever tomorrow in Lyon', 'rain forecast']) {
      const viaField = await shared.search(request, { k: 4, includeRanks: false, learned: fieldOf(learned) });
      const viaIndex = await written.search(request, { k: 4, includeRanks: false });
      assert.deepEqual(viaField.results.map((hit) => hit.id), viaIndex.results.map((hit) => hit.id), request);
      viaField.results.forEach((hit, i) => assert.ok(Math.abs(hit.score - viaIndex.results[i]!.score) < 1e-5, `${request}: ${hit.id} ${hit.score} vs ${viaIndex.results[i]!.score}`));
    }
  });

  it('brings in a tool through words only its learned requests carry, and changes nothing without them', async () => {
    const index = createRetrievalIndex();
    await index.build(tools);
    const without = await index.search('will my hay fever be bad', { k: 4, includeRanks: false });
    assert.equal(without.results.some((hit) => hit.id === 'pollen'), false, 'the tool text does not match');
    const withField = await index.search('will my hay fever be bad', { k: 4, includeRanks: false, learned: fieldOf(learned) });
    assert.equal(withField.results[0]?.id, 'pollen');
    const unrelated = await index.search('send an email to Ana', { k: 4, includeRanks: false, learned: fieldOf(learned) });
    assert.deepEqual(unrelated.results, (await index.search('send an email to Ana', { k: 4, includeRanks: false })).results);
  });

  it('separates tools of one topic: a shared topic word learned by both moves neither, the distinctive words decide', async () => {
    const index = createRetrievalIndex({ options: { conceptWeight: 0 } });
    await index.build(tools);
    const both = fieldOf({ forecast: ['weather in Lyon next week', 'weather for the weekend'], history: ['weather in Lyon last week', 'weather records from last year'] });
    const next = await index.search('weather next weekend', { k: 2, includeRanks: false, learned: both });
    const last = await index.search('weather last year', { k: 2, includeRanks: false, learned: both });
    assert.equal(next.results[0]?.id, 'forecast');
    assert.equal(last.results[0]?.id, 'history');
  });
});
