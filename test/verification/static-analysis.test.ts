/**
 * The static analysis stage on plugins built in the test (issue #10): a benign plugin scores
 * 100; obfuscated code, install scripts, dynamic process spawning and undeclared network use
 * lose the points the module comment gives, with `file:line` locations; limits and links are
 * honoured and reported. No database is involved (stages never touch it).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createStaticAnalysisStage, staticAnalysisStage } from '../../src/verification/stages/static-analysis/index.ts';
import { buildCorpusPlugin, contextFor, removeAll, subjectFor } from './stage-corpus.ts';

const folders: string[] = [];
after(() => removeAll(folders));

const echoTool = { name: 'echo', description: 'Echoes the text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };

async function analyse(plugin: Parameters<typeof buildCorpusPlugin>[0], extra: Parameters<typeof subjectFor>[2] = {}) {
  const root = await buildCorpusPlugin(plugin);
  folders.push(root);
  const context = contextFor(await subjectFor(root, plugin.name, extra));
  return { root, result: await staticAnalysisStage(context), context };
}

const codes = (issues: ReadonlyArray<{ code: string }>) => issues.map((issue) => issue.code).sort();

describe('static analysis stage', () => {
  it('a benign plugin scores 100 with nothing to report', async () => {
    const { result, context } = await analyse({ name: 'benign', tools: [echoTool] });
    assert.equal(result.score, 100, JSON.stringify(result.issues));
    assert.deepEqual(result.issues, []);
    assert.equal(result.metrics?.['ownFiles'], 1);
    assert.ok(context.lines.some((line) => line.includes('parsing 1 files')));
  });

  it('obfuscated code: _0x names, an escaped property name and a decoded base64 blob, located by line', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `var _0x${(0xa1b2 + i).toString(16)} = ${i};`).join('\n');
    const blob = Buffer.from('console.log("payload");'.repeat(8)).toString('base64');
    const code = `${names}\nconst run = globalThis["\\x65\\x76\\x61\\x6c"];\nrun(Buffer.from('${blob}', 'base64').toString());\n`;
    const { result } = await analyse({ name: 'obfuscated', tools: [echoTool], files: { 'lib/payload.js': code } });
    assert.deepEqual(codes(result.issues), ['encoded-blob', 'escaped-identifier', 'obfuscated-identifiers']);
    const located = Object.fromEntries(result.issues.map((issue) => [issue.code, issue.location]));
    assert.equal(located['obfuscated-identifiers'], 'lib/payload.js:1');
    assert.equal(located['escaped-identifier'], 'lib/payload.js:13');
    assert.equal(located['encoded-blob'], 'lib/payload.js:14');
    // Three high issues in the plugin's own code: 100 − 3 × 15.
    assert.equal(result.score, 55);
    assert.ok(result.issues.every((issue) => !issue.message.includes(blob.slice(0, 20))), 'no file content in issues');
  });

  it('install scripts: high in the plugin, medium in a dependency, both at full weight', async () => {
    const { result } = await analyse({
      name: 'installer',
      tools: [echoTool],
      scripts: { postinstall: 'node setup.js', test: 'node --test' },
      dependencies: [{ name: 'native-thing', version: '2.0.0', scripts: { install: 'node-gyp rebuild' } }],
    });
    const scripts = result.issues.filter((issue) => issue.code === 'install-script');
    assert.deepEqual(scripts.map((issue) => [issue.severity, issue.location]), [['high', 'installer@1.0.0'], ['medium', 'native-thing@2.0.0']]);
    assert.equal(result.score, 100 - 15 - 6);
    assert.equal(result.metrics?.['dependencies'], 1);
  });

  it('process spawning: run-time arguments are high, a fixed command is only noted; dependencies weigh less', async () => {
    const own = [
      "import { spawn, execFile } from 'node:child_process';",
      "execFile('git', ['status']);",
      'export function run(command, args) { return spawn(command, args); }',
      '',
    ].join('\n');
    const { result } = await analyse({
      name: 'spawner',
      tools: [echoTool],
      files: { 'lib/run.mjs': own },
      dependencies: [{ name: 'runner', version: '1.0.0', files: { 'index.js': "const cp = require('child_process');\nmodule.exports = (c) => cp.exec(c);\n" } }],
    });
    const byCode = result.issues.filter((issue) => issue.code === 'dynamic-process' || issue.code === 'process-spawn').map((issue) => [issue.code, issue.severity, issue.location]);
    assert.deepEqual(byCode, [
      ['dynamic-process', 'high', 'lib/run.mjs:3'],
      ['dynamic-process', 'low', 'node_modules/runner/index.js:2'],
      ['process-spawn', 'info', 'lib/run.mjs:2'],
    ]);
    // 15 for the plugin's own call, 2 / 2 for the dependency's.
    assert.equal(result.score, 84);
  });

  it('network use is medium when undeclared and informational once the intelligence document declares it', async () => {
    const files = { 'lib/net.mjs': "import http from 'node:http';\nexport const get = (u) => fetch(u);\n" };
    const undeclared = await analyse({ name: 'caller', tools: [echoTool], files });
    const network = undeclared.result.issues.find((issue) => issue.code === 'network');
    assert.equal(network?.severity, 'medium');
    assert.match(network!.message, /declares no network need \(http, fetch\); 2 places/);
    assert.equal(undeclared.result.score, 94);
    const declared = await analyse({ name: 'caller2', tools: [echoTool], files }, { intelligence: { version: '1.0', pluginId: 'x', safety: { requiredPermissions: ['network:outbound'] } } });
    assert.equal(declared.result.issues.find((issue) => issue.code === 'network')?.severity, 'info');
    assert.equal(declared.result.score, 100);
  });

  it('eval, new Function and dynamic require are found by the parser; the same words in comments and strings are not', async () => {
    const code = [
      '// eval(input) and new Function(body) in a comment do not count',
      "const text = 'require(name) in a string';",
      'export const a = (input) => eval(input);',
      "export const b = (body) => new Function('x', body);",
      'export const c = (name) => require(name);',
      "export const d = require('node:path');",
      '',
    ].join('\n');
    const { result } = await analyse({ name: 'dynamic', tools: [echoTool], files: { 'lib/dyn.cjs': code } });
    assert.deepEqual(
      result.issues.map((issue) => [issue.code, issue.location]),
      [['eval', 'lib/dyn.cjs:3'], ['dynamic-code', 'lib/dyn.cjs:4'], ['dynamic-require', 'lib/dyn.cjs:5']],
    );
    assert.equal(result.score, 100 - 15 - 15 - 6);
  });

  it('bounds the work: large files and files over the count are skipped and reported, .d.ts and links are not read', async () => {
    const root = await buildCorpusPlugin({
      name: 'bounded',
      tools: [echoTool],
      files: { 'big.js': `// ${'x'.repeat(3000)}\n`, 'types.d.ts': 'declare const evil: string; eval(evil);\n', 'a.js': 'export {};\n', 'b.js': 'export {};\n', 'c.js': 'export {};\n' },
    });
    folders.push(root);
    await symlink('/etc/passwd', join(root, 'leak.js'));
    const stage = createStaticAnalysisStage({ limits: { maxFiles: 3, maxFileBytes: 2048, maxTotalBytes: 1024 * 1024 } });
    const result = await stage(contextFor(await subjectFor(root, 'bounded')));
    assert.deepEqual(result.metrics?.['skipped'], { tooLarge: 1, overLimit: 1, links: 1, declarations: 1, unreadable: 0 });
    assert.equal(result.metrics?.['files'], 3);
    const skipped = result.issues.find((issue) => issue.code === 'files-skipped');
    assert.match(skipped!.message, /^2 code files not analysed \(1 over 2048 bytes, 1 over the file \/ size budget, 0 unreadable\)/);
    assert.equal(result.score, 100, 'skipping is reported, not scored');
  });

  it('an npm install prefix: the named dependency is the plugin, its own dependencies are the tree', async () => {
    const root = await buildCorpusPlugin({ name: 'inner', tools: [echoTool], dependencies: [{ name: 'real-plugin', version: '3.1.0', scripts: { postinstall: 'x' }, dependencies: { helper: '1.0.0' } }, { name: 'helper', version: '1.0.0' }] });
    folders.push(root);
    // Rewrite the root package.json as npm's prefix file (no name): real-plugin is the plugin.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(root, 'package.json'), JSON.stringify({ dependencies: { 'real-plugin': '3.1.0' } }));
    const expected = [['install-script', 'high', 'real-plugin@3.1.0']];
    const result = await staticAnalysisStage(contextFor(await subjectFor(root, 'inner')));
    assert.deepEqual(result.issues.map((issue) => [issue.code, issue.severity, issue.location]), expected);
    assert.equal(result.metrics?.['packages'], 2);
    assert.equal(result.metrics?.['dependencies'], 1);
    // The subject's layout for npm installs: the code folder is the package inside the install
    // root (source.cachePath), its dependencies hoisted beside it; same tree, same issues.
    const packageDir = join(root, 'node_modules/real-plugin');
    for (const source of [{ cachePath: root, packageFolder: 'node_modules/real-plugin' }, {}]) {
      const inner = await staticAnalysisStage(contextFor({ ...(await subjectFor(root, 'inner')), codeDir: packageDir, source }));
      assert.deepEqual(inner.issues.map((issue) => [issue.code, issue.severity, issue.location]), expected);
      assert.equal(inner.metrics?.['packages'], 2, JSON.stringify(source));
    }
  });

  it('a remote plugin has no code: half marks and says why', async () => {
    const result = await staticAnalysisStage(contextFor({ pluginId: 'r', pluginName: 'remote', version: '1', sourceType: 'url', source: {}, codeDir: null, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch: null }));
    assert.equal(result.score, 50);
    assert.deepEqual(codes(result.issues), ['no-code']);
  });
});
