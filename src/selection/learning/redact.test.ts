import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { redact, textKey } from './redact.ts';

describe('learned example redaction (issue #13)', () => {
  const cases: Array<[string, string, string]> = [
    ['email alice.smith@example.com the report', 'email <email> the report', 'email'],
    ['call me at +1 (415) 555-0132 tomorrow', 'call me at <phone> tomorrow', 'phone'],
    ['ring 020 7946 0958 please', 'ring <phone> please', 'phone'],
    ['use api_key=abcd1234efgh please', 'use api_key=<secret> please', 'assigned_secret'],
    ['login with password: hunter2!', 'login with password=<secret>', 'assigned_secret'],
    ['header Bearer abcdefghijklmnop', 'header <secret>', 'bearer'],
    ['fetch https://bob:hunter2@example.com/x now', 'fetch <url> now', 'url_credentials'],
    ['charge card 4111111111111111', 'charge card <number>', 'digits'],
    ['token sk-live-abcdefghijklmnopqrstuvwx', 'token <secret>', 'key_prefix'],
    ['push with ghp_abcdefghijklmnopqrstuvwxyz0123', 'push with <secret>', 'github_token'],
    ['slack xoxb-1234567890-abcdefghij', 'slack <secret>', 'slack_token'],
    ['aws AKIAIOSFODNN7EXAMPLE key', 'aws <secret> key', 'aws_key'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop', 'jwt <secret>', 'jwt'],
    ['look up commit 3f2a9c0d1e4b5a6c7d8e9f0011223344', 'look up commit <secret>', 'opaque_token'],
  ];
  for (const [input, expected, rule] of cases) {
    it(`${rule}: ${input}`, () => {
      const result = redact(input);
      assert.equal(result.text, expected);
      assert.ok(result.rules.includes(rule), result.rules.join(','));
    });
  }

  it('keeps ordinary requests, short numbers, years and dates', () => {
    for (const text of ['convert 50 euros to yen in 2024', 'meeting on 2024-05-01 at 10:30', 'top 10 restaurants near Paris', 'weather in Zürich']) {
      assert.deepEqual(redact(text), { text, rules: [] });
    }
  });

  it('the dedupe key folds case, punctuation and spacing, keeping placeholders', () => {
    assert.equal(textKey('Convert  50 EUR to Yen!'), textKey('convert 50 eur to yen'));
    assert.equal(textKey('Email <email> now.'), 'email <email> now');
    assert.notEqual(textKey('convert 50 eur'), textKey('convert 60 eur'));
  });
});
