import { describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { countJsonTokens, countTokens, TOKENIZER_IDLE_MS } from './tokens.ts';

// Each test file runs in its own process: nothing here loaded the tokenizer before.
const tokenizerLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('o200k_base'));

describe('countTokens', () => {
  it('lets the tokenizer go after TOKENIZER_IDLE_MS without a count, and counts the same afterwards (issue #28)', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      assert.equal(tokenizerLoaded(), false);
      const schema = { name: 'send_email', description: 'Send an email to a recipient', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } };
      const before = countJsonTokens(schema);
      assert.ok(before > 10);
      assert.equal(tokenizerLoaded(), true);
      mock.timers.tick(TOKENIZER_IDLE_MS - 1);
      assert.equal(tokenizerLoaded(), true, 'released before it was idle for TOKENIZER_IDLE_MS');
      mock.timers.tick(1);
      assert.equal(tokenizerLoaded(), false, 'the o200k tables stay loaded while idle');
      assert.equal(countJsonTokens(schema), before);
      assert.equal(countTokens('hello world'), 2);
    } finally {
      mock.timers.reset();
    }
  });
});
