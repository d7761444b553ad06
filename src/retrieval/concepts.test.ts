import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { conceptGroups, relatedTerms } from './concepts.ts';
import { functionWords, stem, terms } from './tokenizer.ts';

/** The lexicon's expansions of a query, as query analysis asks for them (function words not expanded). */
function expand(query: string): Set<string> {
  const stems = terms(query);
  return relatedTerms(stems, (i) => !functionWords.has(stems[i]!));
}

/** Stems of every single-word entry of the groups holding `word`. */
function groupStems(word: string): Set<string> {
  const out = new Set<string>();
  for (const group of conceptGroups) if (group.includes(word)) for (const entry of group) if (!entry.includes(' ')) out.add(stem(entry));
  return out;
}

/**
 * Single-word lexicon entries of different groups (no group in common) that share a stem:
 * the query word of one expands to the other's group. Programmatic, so a new entry that
 * merges with an unrelated one fails the test below until it is fixed or accepted.
 */
function crossGroupCollisions(): string[] {
  const byStem = new Map<string, Map<string, Set<number>>>();
  conceptGroups.forEach((group, index) => {
    for (const entry of group) {
      if (entry.includes(' ')) continue;
      const words = byStem.get(stem(entry)) ?? new Map<string, Set<number>>();
      const groups = words.get(entry) ?? new Set<number>();
      groups.add(index);
      words.set(entry, groups);
      byStem.set(stem(entry), words);
    }
  });
  const found: string[] = [];
  for (const words of byStem.values()) {
    const entries = [...words.keys()].sort();
    for (let a = 0; a < entries.length; a++) {
      for (let b = a + 1; b < entries.length; b++) {
        const shared = [...words.get(entries[a]!)!].some((group) => words.get(entries[b]!)!.has(group));
        if (!shared) found.push(`${entries[a]}/${entries[b]}`);
      }
    }
  }
  return found.sort();
}

describe('concept lexicon', () => {
  it('does not read "news" as "new": "latest news" expands to news words, not the create group', () => {
    const related = expand('latest news');
    for (const word of ['create', 'add', 'make', 'generate', 'build', 'insert']) assert.ok(!related.has(stem(word)), `"latest news" expanded to ${word}`);
    assert.ok(related.has(stem('headline')), 'the news group still applies');
    assert.notEqual(stem('news'), stem('new'));
  });

  it('still expands "new" to the create group (the fix did not drop it)', () => {
    const related = expand('make a new page');
    assert.ok(related.has(stem('create')));
    assert.ok(!related.has(stem('headline')), '"new" is not news');
  });

  it('does not read "as well as" as "wellness": nothing health-related', () => {
    const health = new Set([...groupStems('health'), ...groupStems('medicine'), ...groupStems('fitness')]);
    const related = expand('book a flight as well as a hotel');
    for (const term of related) assert.ok(!health.has(term), `"as well as" expanded to ${term}`);
    assert.ok(expand('wellness tips').has(stem('health')), 'the word wellness still reaches the health group');
    assert.equal(expand('as well as').size, 0);
  });

  it('keeps apart the words Porter merged with unrelated ones (stemmer.ts protected families)', () => {
    const pairs = [
      ['news', 'new'], ['wellness', 'well'], ['important', 'import'], ['general', 'generate'], ['personal', 'person'],
      ['personalized', 'person'], ['publication', 'public'], ['excellent', 'excel'], ['organic', 'organize'],
      ['organization', 'organize'], ['organizations', 'organ'], ['community', 'communication'], ['productivity', 'product'],
      ['positive', 'position'], ['customize', 'customer'], ['hospitality', 'hospital'], ['definitely', 'definition'],
      ['authentic', 'authenticate'], ['conversation', 'conversion'], ['projection', 'project'], ['presentation', 'present'],
      ['mindfulness', 'mind'], ['exceptional', 'exception'], ['localize', 'local'], ['authorization', 'author'], ['container', 'contain'],
    ] as const;
    for (const [a, b] of pairs) assert.notEqual(stem(a), stem(b), `${a} and ${b} share the stem ${stem(a)}`);
    // Families still fold their own inflections.
    assert.equal(stem('organizations'), stem('organization'));
    assert.equal(stem('communities'), stem('community'));
    assert.equal(stem('customized'), stem('customize'));
  });

  it('lists every remaining cross-group stem merge, each one of related meaning', () => {
    // Accepted: the two words are related, so sharing expansions does little harm.
    assert.deepEqual(crossGroupCollisions(), [
      'follow/follower',
      'list/listing',
      'locate/location',
      'medical/medication',
      'observation/observe',
      'rate/rating',
      'read/reading',
      'set/setting',
    ]);
  });
});
