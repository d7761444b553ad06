import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonc, stripJsonComments } from './jsonc.ts';

describe('JSON with comments (VS Code mcp.json)', () => {
  it('drops line and block comments and trailing commas, keeping strings intact', () => {
    const text = `{
      // servers
      "servers": { /* one */ "a": { "url": "http://x//y", "note": "/* not a comment */", "q": "a\\"b//c", }, },
      "list": [1, 2, ],
    }`;
    assert.deepEqual(parseJsonc(text), { servers: { a: { url: 'http://x//y', note: '/* not a comment */', q: 'a"b//c' } }, list: [1, 2] });
  });

  it('keeps line numbers (comments become spaces) and still rejects broken JSON', () => {
    const text = '{\n/* a\nb */\n"x": 1\n}';
    assert.equal(stripJsonComments(text).split('\n').length, text.split('\n').length);
    assert.deepEqual(parseJsonc('\uFEFF{"x": 1}'), { x: 1 });
    assert.throws(() => parseJsonc('{"x": }'), SyntaxError);
    assert.throws(() => parseJsonc('{"x": 1 // unterminated'), SyntaxError);
  });
});
