import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildLexicalIndex } from './lexical-index.ts';

const oneField = [{ weight: 1, b: 0.75 }];

describe('BM25F lexical index', () => {
  it('gives rare terms a higher IDF than common ones', () => {
    const index = buildLexicalIndex([[['pdf', 'file']], [['image', 'file']], [['text', 'file']]], oneField, 1.2);
    assert.ok(index.idf('pdf') > index.idf('file'));
    assert.equal(index.idf('unknown'), 0);
    assert.equal(index.documentFrequency('file'), 3);
  });

  it('scores only documents with the term, more for repeats but saturating', () => {
    const index = buildLexicalIndex([[['pdf']], [['pdf', 'pdf']], [['pdf', 'pdf', 'pdf', 'pdf']], [['other']]], oneField, 1.2);
    const scores = new Float32Array(4);
    index.accumulate([{ term: 'pdf', weight: 1 }], scores);
    assert.equal(scores[3], 0);
    assert.ok(scores[1]! > scores[0]!);
    // Saturation: the fourth occurrence adds less than the second did.
    assert.ok(scores[2]! - scores[1]! < scores[1]! - scores[0]!);
  });

  it('normalises by field length and weights fields', () => {
    const fields = [{ weight: 3, b: 0.5 }, { weight: 1, b: 0.75 }];
    const index = buildLexicalIndex(
      [
        [['weather'], ['get', 'forecast']],
        [['forecast'], ['weather', 'data']],
        [['x'], ['weather', 'and', 'many', 'other', 'words', 'here']],
      ],
      fields,
      1.2,
    );
    const scores = new Float32Array(3);
    index.accumulate([{ term: 'weather', weight: 1 }], scores);
    assert.ok(scores[0]! > scores[1]!, 'a name match outweighs a description match');
    assert.ok(scores[1]! > scores[2]!, 'a short description beats a long one');
  });

  it('applies query term weights linearly', () => {
    const index = buildLexicalIndex([[['a', 'b']], [['c']]], oneField, 1.2);
    const once = new Float32Array(2);
    const twice = new Float32Array(2);
    index.accumulate([{ term: 'a', weight: 1 }], once);
    index.accumulate([{ term: 'a', weight: 2 }], twice);
    assert.ok(Math.abs(twice[0]! - 2 * once[0]!) < 1e-6);
  });

  it('scores several queries into rows in one pass, equal to one accumulate per query', () => {
    const index = buildLexicalIndex([[['pdf', 'text']], [['image', 'text']], [['pdf']], [['other']]], oneField, 1.2);
    const queries = [
      [{ term: 'pdf', weight: 1 }, { term: 'text', weight: 0.5 }],
      [{ term: 'text', weight: 2 }],
      [{ term: 'missing', weight: 1 }, { term: 'pdf', weight: 0 }],
    ];
    const rows = new Float32Array(index.size * queries.length);
    const visited = index.accumulateRows(queries, rows);
    queries.forEach((query, q) => {
      const single = new Float32Array(index.size);
      index.accumulate(query, single);
      for (let d = 0; d < index.size; d++) assert.ok(Math.abs(rows[q * index.size + d]! - single[d]!) < 1e-6, `query ${q} doc ${d}`);
    });
    // 'text' is shared by two queries but its postings are read once: pdf (2) + text (2).
    assert.equal(visited, 4);
  });
});
