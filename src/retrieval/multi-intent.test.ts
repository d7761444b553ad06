import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitClauses } from './multi-intent.ts';

describe('multi-intent clause splitting', () => {
  it('keeps a single request whole', () => {
    assert.deepEqual(splitClauses('Find a shelter near the specified address.'), ['Find a shelter near the specified address.']);
    assert.deepEqual(splitClauses('Train a model using the "Wine Quality" dataset.'), ['Train a model using the "Wine Quality" dataset.']);
  });

  it('splits on sentences and connectives, merging fragments without content', () => {
    const clauses = splitClauses(
      'Please provide the GDP of the United States. Additionally, I also need the market size of smartphones, then get the status of energy innovation. Thank you.',
    );
    assert.deepEqual(clauses, [
      'Please provide the GDP of the United States.',
      'Additionally, I also need the market size of smartphones',
      'then get the status of energy innovation. Thank you.',
    ]);
  });

  it('does not split inside quoted literals or decimal numbers', () => {
    const clauses = splitClauses("Detect the language of 'Ich bin froh, dich zu sehen. Danke.' then compute the gain at 47.7 Hz frequency.");
    assert.equal(clauses.length, 2);
    assert.match(clauses[0]!, /Danke\.'$/);
    assert.match(clauses[1]!, /47\.7 Hz/);
  });

  it('looks inside a query that is quoted as a whole', () => {
    assert.equal(splitClauses('"I want running shoes. Also find discounted arch support insoles."').length, 2);
  });
});
