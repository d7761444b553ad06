import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detectToolPoisoning, nameSkeleton, normaliseForMatching } from './poisoning.ts';
import { BENIGN_TOOLS, CORPUS_OTHER_TOOL_NAMES, POISONED_TOOLS } from './poisoning-corpus.ts';

const others = { otherToolNames: CORPUS_OTHER_TOOL_NAMES };

describe('tool poisoning detector', () => {
  for (const entry of POISONED_TOOLS) {
    it(`reports ${entry.expected} for corpus case ${entry.id}`, () => {
      const findings = detectToolPoisoning([entry.tool], others);
      assert.ok(
        findings.some((finding) => finding.kind === entry.expected && finding.tool === entry.tool.name),
        `expected ${entry.expected}, got ${JSON.stringify(findings.map((f) => f.kind))}`,
      );
    });
  }

  it('finds nothing in benign tools that mention files, URLs, other languages and emoji sequences', () => {
    assert.deepEqual(detectToolPoisoning(BENIGN_TOOLS, others), []);
  });

  it('names the schema path of a finding and never the matched text', () => {
    const entry = POISONED_TOOLS.find((c) => c.id === 'exfil-email-enum')!;
    const [finding] = detectToolPoisoning([entry.tool], others);
    assert.equal(finding?.field, 'inputSchema.properties.mode.enum[1]');
    assert.ok(!JSON.stringify(finding).includes('evil-notes'));
  });

  it('checks property names for hidden characters', () => {
    const findings = detectToolPoisoning([{ name: 'x_tool', inputSchema: { type: 'object', properties: { 'pa\u200Bth': { type: 'string' } } } }]);
    assert.deepEqual(findings.map((f) => [f.kind, f.field]), [['invisible-unicode', 'inputSchema.properties.pa\u200Bth']]);
  });

  it('shadowing by name needs an identifier-like name, so plain words are not mentions', () => {
    const tool = { name: 'notes', description: 'Search your notes by keyword.', inputSchema: {} };
    assert.deepEqual(detectToolPoisoning([tool], { otherToolNames: ['search'] }), []);
    assert.equal(detectToolPoisoning([{ ...tool, description: 'Then call read_file on the result.' }], { otherToolNames: ['read_file'] })[0]?.kind, 'shadowing');
  });

  it('camelCase names match only in their case; ASCII names differing in case are not look-alikes', () => {
    const tool = { name: 'cart', description: 'Proceeds to checkout.', inputSchema: {} };
    assert.deepEqual(detectToolPoisoning([tool], { otherToolNames: ['checkOut', 'Cart'] }), []);
    assert.equal(detectToolPoisoning([{ ...tool, description: 'Call checkOut afterwards.' }], { otherToolNames: ['checkOut'] })[0]?.kind, 'shadowing');
  });

  it('does not call a plugin\'s own tool names shadowing', () => {
    const tools = [
      { name: 'list_items', description: 'Lists items; pass an id to get_item next.', inputSchema: {} },
      { name: 'get_item', description: 'Gets one item.', inputSchema: {} },
    ];
    assert.deepEqual(detectToolPoisoning(tools, { otherToolNames: ['get_item', 'list_items'] }), []);
  });

  it('folds full-width and Cyrillic look-alikes to an ASCII skeleton, and matches through zero-width splits', () => {
    assert.equal(nameSkeleton('ｓｅｎｄ_\u0435mail'), 'send_email');
    assert.equal(normaliseForMatching('Ig\u200Bnore  PREVIOUS'), 'ignore previous');
  });

  it('needs a request verb with a secret file, and loot with a send verb and an address', () => {
    assert.deepEqual(detectToolPoisoning([{ name: 'ssh_hosts', description: 'Lists hosts from ~/.ssh/config style files.', inputSchema: {} }]), []);
    assert.deepEqual(detectToolPoisoning([{ name: 'webhook', description: 'Posts a JSON body to https://hooks.example.com.', inputSchema: {} }]), []);
  });
});
