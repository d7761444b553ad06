import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nameWords, toolSafety } from './tool-safety.ts';

describe('probe tool safety rule', () => {
  it('splits names in camel, snake, kebab and dotted case', () => {
    assert.deepEqual(nameWords('getUserInfo'), ['get', 'user', 'info']);
    assert.deepEqual(nameWords('list_open-PRs.v2'), ['list', 'open', 'prs', 'v2']);
    assert.deepEqual(nameWords('search_nodes'), ['search', 'nodes']);
  });

  it('follows annotations first: destructive never, read-only always, not-read-only never', () => {
    assert.equal(toolSafety({ name: 'get_x', annotations: { destructiveHint: true, readOnlyHint: true } }).safe, false);
    assert.equal(toolSafety({ name: 'toggle_logging', annotations: { readOnlyHint: true } }).safe, true);
    assert.equal(toolSafety({ name: 'get_x', annotations: { readOnlyHint: false } }).safe, false);
  });

  it('without annotations, calls only names that read as a read', () => {
    assert.equal(toolSafety({ name: 'getWeather' }).safe, true);
    assert.equal(toolSafety({ name: 'search_issues', description: 'Search issues.' }).safe, true);
    assert.equal(toolSafety({ name: 'create_issue' }).safe, false);
    assert.equal(toolSafety({ name: 'get_and_delete_item' }).safe, false);
    assert.equal(toolSafety({ name: 'weather' }).safe, false, 'no verb: not called');
    assert.equal(toolSafety({ name: 'fetch_url', description: 'Send the page to a webhook.' }).safe, false);
  });
});
