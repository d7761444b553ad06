import { describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { idleRequire } from './idle-require.ts';

type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');
const specifier = 'gpt-tokenizer/encoding/o200k_base';
// Each test file runs in its own process: nothing here loaded the tokenizer before.
const cached = () => Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('o200k_base'));

describe('idleRequire', () => {
  it('requires on the first get, and after a release requires afresh with the same answers', () => {
    const tokenizer = idleRequire<Tokenizer>(specifier, { idleMs: 60_000 });
    assert.equal(tokenizer.loaded, false);
    assert.deepEqual(cached(), []);
    const first = tokenizer.get();
    const tokens = first.encode('{"name":"send_email","description":"Send an email"}');
    assert.equal(tokenizer.loaded, true);
    assert.ok(cached().length >= 2, 'the encoding and its rank table');
    tokenizer.release();
    assert.equal(tokenizer.loaded, false);
    assert.deepEqual(cached(), [], 'the released files stay in require.cache');
    const second = tokenizer.get();
    assert.notEqual(second, first);
    assert.deepEqual(second.encode('{"name":"send_email","description":"Send an email"}'), tokens);
    tokenizer.release();
  });

  it('lets go of the module once idleMs passed without a get, not while it is used', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const tokenizer = idleRequire<Tokenizer>(specifier, { idleMs: 1_000 });
      tokenizer.get();
      mock.timers.tick(600);
      tokenizer.get();
      mock.timers.tick(600);
      assert.equal(tokenizer.loaded, true, 'released 1,200 ms after the first get though used 600 ms ago');
      mock.timers.tick(500);
      assert.equal(tokenizer.loaded, false);
      assert.deepEqual(cached(), []);
    } finally {
      mock.timers.reset();
    }
  });
});
