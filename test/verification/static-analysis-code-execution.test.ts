/**
 * Static analysis of what code can do (issue #23), on fixture folders per language
 * (test/verification/fixtures/static/): code execution from data (eval, new Function, vm,
 * Worker with eval, computed import, child_process with a computed command; Python exec,
 * eval, subprocess with shell=True, os.system, pickle / marshal loads, __import__), raw
 * sockets, home-directory secrets (.ssh, .aws, .npmrc) and environment harvesting are each an
 * issue located by line; the secrets cap the verdict at UNVERIFIED, code execution from data
 * at COMMUNITY. The benign fixtures, which name the same things only in comments, docstrings
 * and prose, score 100 without a cap. The Python folder of the issue (reads ~/.ssh/id_rsa,
 * POSTs it, runs subprocess(shell=True)) scored 100 before this change.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { staticAnalysisStage } from '../../src/verification/stages/static-analysis/index.ts';
import { computeVerdict } from '../../src/verification/verdict.ts';
import type { StageResult, VerificationSubject } from '../../src/verification/types.ts';
import { contextFor } from './stage-corpus.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/static/${name}`, import.meta.url));

function subject(name: string): VerificationSubject {
  const codeDir = fixture(name);
  return { pluginId: `id-${name}`, pluginName: name, version: '1.0.0', sourceType: 'path', source: { path: codeDir }, codeDir, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch: null };
}

async function analyse(name: string): Promise<StageResult> {
  return staticAnalysisStage(contextFor(subject(name)));
}

/** `code@line` of every issue whose location is in `file`, sorted. */
function located(result: StageResult): string[] {
  return result.issues.filter((issue) => issue.location !== undefined).map((issue) => `${issue.code}@${issue.location!.split(':').pop()}`).sort();
}

/** A verdict where every other stage scored 100: what this stage alone does to the level. */
function levelWith(result: StageResult): string {
  const perfect = { score: 100, issues: [] };
  return computeVerdict({ staticAnalysis: result, schemaValidation: perfect, sandboxExecution: perfect, securityScan: perfect, compatibility: perfect }).trustLevel;
}

describe('static analysis: code execution, sockets, secrets and environment harvesting', () => {
  it('Python: each pattern is an issue at its line; home secrets cap at UNVERIFIED; the score drops far from 100', async () => {
    const result = await analyse('python-bad');
    const codes = new Set(result.issues.map((issue) => issue.code));
    for (const code of ['secret-path', 'dynamic-process', 'eval', 'dynamic-code', 'unsafe-deserialise', 'env-enumeration', 'env-serialisation', 'raw-socket', 'dynamic-import', 'network']) {
      assert.ok(codes.has(code), `${code} missing: ${JSON.stringify(result.issues)}`);
    }
    // One issue per kind with the first place and the count; first places are the fixture's lines.
    assert.deepEqual(located(result), [
      'dynamic-code@31', 'dynamic-import@52', 'dynamic-process@19', 'env-enumeration@39', 'env-serialisation@39', 'eval@27', 'network@8', 'raw-socket@43', 'secret-path@10', 'unsafe-deserialise@35',
    ]);
    const process = result.issues.find((issue) => issue.code === 'dynamic-process')!;
    assert.match(process.message, /subprocess\.run \(shell\), os\.system \(shell\)\); 2 places/);
    assert.equal(result.issues.find((issue) => issue.code === 'secret-path')?.severity, 'critical');
    assert.ok(result.score <= 20, `score ${result.score}`);
    assert.equal(result.cap?.level, 'UNVERIFIED');
    assert.match(result.cap!.reason, /home-directory secrets \(server\.py:10\)/);
    assert.equal(levelWith(result), 'UNVERIFIED');
  });

  it('JavaScript: each pattern is an issue at its line; home secrets cap at UNVERIFIED', async () => {
    const result = await analyse('js-bad');
    assert.deepEqual(located(result), ['dynamic-code@11', 'dynamic-import@14', 'dynamic-process@15', 'env-enumeration@19', 'env-serialisation@18', 'eval@10', 'network@3', 'raw-socket@3', 'secret-path@16']);
    const code = result.issues.find((issue) => issue.code === 'dynamic-code')!;
    assert.match(code.message, /Function, vm\.runInNewContext, Worker with eval\); 3 places/);
    assert.match(result.issues.find((issue) => issue.code === 'secret-path')!.message, /3 places/);
    assert.ok(result.score <= 20, `score ${result.score}`);
    assert.equal(result.cap?.level, 'UNVERIFIED');
  });

  it('code execution from data alone (no secrets) caps at COMMUNITY; the same call with a literal does not', async () => {
    const { buildCorpusPlugin, removeAll } = await import('./stage-corpus.ts');
    const tools = [{ name: 'run', description: 'Runs JavaScript.', inputSchema: { type: 'object', properties: { code: { type: 'string' } } } }];
    const fromData = await buildCorpusPlugin({ name: 'evaluator', tools, files: { 'lib/run.mjs': 'export const run = (code) => eval(code);\n' } });
    const literal = await buildCorpusPlugin({ name: 'literal', tools, files: { 'lib/run.mjs': "export const global = () => new Function('return this')();\n" } });
    try {
      const run = async (root: string, name: string) => staticAnalysisStage(contextFor({ ...subject('js-benign'), pluginName: name, codeDir: root, source: { path: root } }));
      const evaluator = await run(fromData, 'evaluator');
      assert.equal(evaluator.cap?.level, 'COMMUNITY');
      assert.match(evaluator.cap!.reason, /runs code or commands computed at run time \(eval, lib\/run\.mjs:1\)/);
      assert.equal(levelWith(evaluator), 'COMMUNITY');
      const fixed = await run(literal, 'literal');
      assert.equal(fixed.cap, undefined);
      assert.deepEqual(fixed.issues.map((issue) => issue.code), ['dynamic-code']);
    } finally {
      await removeAll([fromData, literal]);
    }
  });

  it('the benign fixtures, naming the same things only in comments, docstrings and prose, score 100 with no cap', async () => {
    for (const name of ['python-benign', 'js-benign']) {
      const result = await analyse(name);
      assert.deepEqual(result.issues.filter((issue) => issue.severity !== 'info'), [], `${name}: ${JSON.stringify(result.issues)}`);
      assert.equal(result.score, 100, name);
      assert.equal(result.cap, undefined, name);
      // A fixed command is noted, never scored.
      assert.deepEqual(result.issues.map((issue) => issue.code), ['process-spawn'], name);
    }
  });
});
