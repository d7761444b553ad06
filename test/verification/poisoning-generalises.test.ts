/**
 * Poisoning detection that generalises (issue #23). The corpus (poisoning-corpus/cases.json,
 * written for this issue) covers shadowing another server's tool, exfiltration to a URL, a
 * parameter or another tool, requests for secrets and the environment in parameter
 * descriptions, overrides, hidden blocks (HTML comments, [SYSTEM] labels, padding), invisible
 * characters, and the same in prompts, resources and tool results. Every case is caught with
 * its kind, and a poisoned tool caps the security scan at UNVERIFIED. With the structural rules
 * switched off (only the phrase rules of issue #10 left) the issue's three misses are missed
 * again, so the corpus test fails without the mechanism.
 *
 * False alarms: the tools the four real npm servers serve (listed over stdio) raise none, and
 * the public bench catalogs (seal-tools, metatool; each tool checked as its own plugin with the
 * rest of the catalog installed beside it) at most 1 per 1,000 tools.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { catalogTools, listServerTools, REAL_SERVERS } from '../../src/cli/bench/poisoning.ts';
import { createPoisoningDetector, detectTextPoisoning, detectToolPoisoning, setStructuralRules, type PoisoningToolInput } from '../../src/verification/stages/security-scan/poisoning.ts';
import { securityScanStage } from '../../src/verification/stages/security-scan/index.ts';
import type { VerificationSubject } from '../../src/verification/types.ts';
import { contextFor } from './stage-corpus.ts';
import { loadPoisoningCorpus, type CorpusCase } from './poisoning-corpus/load.ts';

const corpus = loadPoisoningCorpus();

function kindsOf(entry: CorpusCase): string[] {
  if (entry.where === 'tool') return detectToolPoisoning([entry.tool]).map((finding) => finding.kind);
  return detectTextPoisoning(entry.text, { surface: entry.where, ownNames: entry.owned }).map((finding) => finding.kind);
}

function remoteSubject(tools: VerificationSubject['tools']): VerificationSubject {
  return { pluginId: 'p', pluginName: 'p', version: '1', sourceType: 'url', source: {}, codeDir: null, manifest: null, intelligence: null, tools, otherToolNames: [], launch: null };
}

after(() => setStructuralRules(true));

describe('poisoning detection on a corpus written for issue #23', () => {
  it('covers every attack class on every surface', () => {
    const classes = new Set(corpus.map((entry) => `${entry.where}:${entry.expected}`));
    for (const needed of ['tool:shadowing', 'tool:exfiltration', 'tool:secret-request', 'tool:hidden-instruction', 'tool:invisible-unicode', 'prompt:exfiltration', 'resource:hidden-instruction', 'result:shadowing', 'result:exfiltration', 'result:hidden-instruction', 'result:invisible-unicode', 'result:secret-request']) {
      assert.ok(classes.has(needed), needed);
    }
  });

  it('catches every case with its kind', () => {
    const missed = corpus.filter((entry) => !kindsOf(entry).includes(entry.expected)).map((entry) => `${entry.id}: ${kindsOf(entry).join(',') || 'nothing'}`);
    assert.deepEqual(missed, []);
  });

  it('a poisoned tool caps the security scan at UNVERIFIED with a critical issue', async () => {
    for (const entry of corpus) {
      if (entry.where !== 'tool') continue;
      const result = await securityScanStage(contextFor(remoteSubject([entry.tool as VerificationSubject['tools'][number]])));
      assert.equal(result.cap?.level, 'UNVERIFIED', entry.id);
      assert.ok(result.issues.some((issue) => issue.code === `poisoning-${entry.expected}` && issue.severity === 'critical'), `${entry.id}: ${JSON.stringify(result.issues)}`);
      assert.ok(result.score <= 60, `${entry.id}: ${result.score}`);
    }
  });

  it('without the structural rules the issue’s three misses come back (the test above fails without them)', () => {
    setStructuralRules(false);
    try {
      const missed = corpus.filter((entry) => !kindsOf(entry).includes(entry.expected)).map((entry) => entry.id);
      for (const id of ['shadow-bcc', 'exfil-fetch-tool', 'schema-env']) assert.ok(missed.includes(id), `${id} caught without the structural rules`);
    } finally {
      setStructuralRules(true);
    }
  });
});

describe('poisoning false alarms on tools written to be useful, not to attack', () => {
  it('the four real npm servers: no tool flagged', { timeout: 120_000 }, async () => {
    const servers = new Map<string, PoisoningToolInput[]>();
    for (const server of REAL_SERVERS) servers.set(server, await listServerTools(server));
    for (const [server, tools] of servers) {
      assert.ok(tools.length > 0, `${server} served no tools`);
      const otherToolNames = [...servers].filter(([other]) => other !== server).flatMap(([, list]) => list.map((tool) => tool.name));
      const findings = createPoisoningDetector({ otherToolNames })(tools);
      assert.deepEqual(findings, [], server);
    }
  });

  it('the public bench catalogs: at most 1 false alarm per 1,000 tools', { timeout: 120_000 }, async () => {
    let total = 0;
    let flagged = 0;
    for (const set of ['seal-tools', 'metatool'] as const) {
      const tools = await catalogTools(set);
      const detect = createPoisoningDetector({ otherToolNames: tools.map((tool) => tool.name) });
      total += tools.length;
      flagged += tools.filter((tool) => detect([tool]).length > 0).length;
    }
    assert.ok(total > 4_000, `${total} tools`);
    assert.ok(flagged / total <= 0.001, `${flagged} of ${total} flagged`);
  });
});
