import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitWords, terms, termWeight, tokenize } from './tokenizer.ts';
import { porterStem } from './stemmer.ts';

describe('tokenizer', () => {
  it('splits camelCase, PascalCase, acronyms, snake_case, kebab-case and digits', () => {
    assert.deepEqual(splitWords('getHealthWorkforce'), ['get', 'Health', 'Workforce']);
    assert.deepEqual(splitWords('HTTPServer parse_json-file file2pdf'), ['HTTP', 'Server', 'parse', 'json', 'file', 'file', '2', 'pdf']);
    assert.deepEqual(splitWords('café, naïve!'), ['cafe', 'naive']);
    assert.deepEqual(splitWords(''), []);
  });

  it('lower-cases and stems every word', () => {
    assert.deepEqual(terms('Connected connections CONNECTING'), ['connect', 'connect', 'connect']);
    assert.deepEqual(terms('getWeatherForecasts'), ['get', 'weather', 'forecast']);
  });

  it('weights function words low but keeps them, and reads capitalised acronyms as content', () => {
    const [it1, will, weather, itUpper, us] = tokenize('it will weather IT US');
    assert.equal(termWeight(it1!, 0.2), 0.2);
    assert.equal(termWeight(will!, 0.2), 0.2);
    assert.equal(termWeight(weather!, 0.2), 1);
    assert.equal(termWeight(itUpper!, 0.2), 1);
    assert.equal(termWeight(us!, 0.2), 1);
  });
});

describe('porter stemmer', () => {
  it('matches the published examples of Porter (1980)', () => {
    const cases: Record<string, string> = {
      caresses: 'caress', ponies: 'poni', cats: 'cat', feed: 'feed', agreed: 'agre', plastered: 'plaster',
      motoring: 'motor', sing: 'sing', conflated: 'conflat', hopping: 'hop', falling: 'fall', filing: 'file',
      happy: 'happi', relational: 'relat', conditional: 'condit', digitizer: 'digit', hopefulness: 'hope',
      formaliti: 'formal', electrical: 'electr', adjustment: 'adjust', adoption: 'adopt', generalization: 'gener',
      controll: 'control', roll: 'roll', rate: 'rate', cease: 'ceas',
    };
    for (const [word, stem] of Object.entries(cases)) assert.equal(porterStem(word), stem, word);
  });

  it('leaves short words alone', () => {
    assert.equal(porterStem('is'), 'is');
    assert.equal(porterStem('a'), 'a');
  });
});

describe('splitWords ASCII fast path', () => {
  it('splits exactly like the Unicode path (which non-ASCII text still takes)', () => {
    const cases = ['getHealthWorkforce', 'XMLHttpRequest', 'HTMLParser2x', 'file2pdf', 'ABCdef1GHi', 'aBCD', 'snake_case-kebab', 'IT US', 'A', '9a', 'v2.1 API_KEY'];
    for (const text of cases) {
      // A trailing non-ASCII word sends the same text through the regular-expression path.
      const unicode = splitWords(`${text} é`);
      assert.deepEqual(splitWords(text), unicode.slice(0, -1), text);
    }
    assert.deepEqual(splitWords('XMLHttpRequest file2pdf'), ['XML', 'Http', 'Request', 'file', '2', 'pdf']);
  });
});
