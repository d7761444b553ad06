import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonc } from './jsonc.ts';

describe('JSON with comments (VS Code mcp.json)', () => {
  it('drops line and block comments and trailing commas, keeping strings intact', () => {
    const text = `{
      // servers
      "servers": { /* one */ "a": { "url": "http://x//y", "note": "/* not a comment */", "q": "a\\"b//c", }, },
      "list": [1, 2, ],
    }`;
    assert.deepEqual(parseJsonc(text), { servers: { a: { url: 'http://x//y', note: '/* not a comment */', q: 'a"b//c' } }, list: [1, 2] });
  });

  it('rejects broken JSON with the line and column of the first error, comments counted', () => {
    assert.throws(() => parseJsonc('{\n/* a\nb */\n"x": \n}'), (error) => error instanceof SyntaxError && /ValueExpected at line 5, column 1/.test(error.message));
    assert.deepEqual(parseJsonc('\uFEFF{"x": 1}'), { x: 1 });
    assert.throws(() => parseJsonc('{"x": }'), SyntaxError);
    assert.throws(() => parseJsonc('{"x": 1 // unterminated'), SyntaxError);
  });
});
