import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { summarizeInstructions, SUMMARY_MAX_CHARS } from './instructions-summary.ts';

describe('summarizeInstructions (issue #26)', () => {
  test('keeps the first sentence of long instructions', () => {
    const instructions = `Testing and demonstration server for MCP protocol features. ${'Use the tools to explore. '.repeat(40)}`;
    assert.equal(summarizeInstructions(instructions), 'Testing and demonstration server for MCP protocol features.');
  });

  test('keeps the first line of a heading-led text, without the heading marks', () => {
    assert.equal(summarizeInstructions('# Weather tools\n\nAsk for forecasts by city. Then more.'), 'Weather tools');
  });

  test('cuts a long first sentence at a word, marked, within the bound', () => {
    const summary = summarizeInstructions(`${'word '.repeat(200)}end.`)!;
    assert.ok(summary.length <= SUMMARY_MAX_CHARS, `${summary.length}`);
    assert.ok(summary.endsWith('word…'), summary);
  });

  test('gives nothing for blank or missing instructions', () => {
    assert.equal(summarizeInstructions(undefined), undefined);
    assert.equal(summarizeInstructions('  \n '), undefined);
  });
});
