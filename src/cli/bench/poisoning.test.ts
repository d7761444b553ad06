import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { benchPoisoning } from './poisoning.ts';

interface Measured {
  corpus: { detected: number; total: number; missed: string[]; benignFlagged: number; benignTotal: number };
  heldOut: { detected: number; total: number; missed: string[] };
  falseAlarms: { tools: number; flagged: number; rate: number; sources: Array<{ source: string; tools: number; flagged: number }> };
}

describe('poisoning bench section', () => {
  it('measures the corpus and false alarms on the four real servers (listed over stdio) and both bench catalogs', async () => {
    const measured = (await benchPoisoning()) as Measured;
    assert.equal(measured.corpus.total, 13);
    assert.equal(measured.corpus.detected + measured.corpus.missed.length, measured.corpus.total);
    assert.equal(measured.heldOut.total, 10);
    assert.equal(measured.heldOut.detected + measured.heldOut.missed.length, measured.heldOut.total);
    assert.deepEqual(
      measured.falseAlarms.sources.map((source) => source.source),
      ['@modelcontextprotocol/server-everything', '@modelcontextprotocol/server-memory', '@modelcontextprotocol/server-sequential-thinking', '@modelcontextprotocol/server-filesystem', 'bench/data/seal-tools', 'bench/data/metatool'],
    );
    // Every source contributed tools (a server that failed to list would throw, a catalog would be empty).
    for (const source of measured.falseAlarms.sources) assert.ok(source.tools > 0, source.source);
    assert.equal(measured.falseAlarms.tools, measured.falseAlarms.sources.reduce((sum, source) => sum + source.tools, 0));
    assert.equal(measured.falseAlarms.flagged, measured.falseAlarms.sources.reduce((sum, source) => sum + source.flagged, 0));
  });
});
