import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { analyseSource, entropy } from './analyse-file.ts';

const found = (fileName: string, text: string) => analyseSource(fileName, text).map((finding) => [finding.code, finding.line, finding.detail ?? null]);

describe('analyseSource', () => {
  it('process calls: a shell string with a template substitution is dynamic, execPath with literal args is fixed; without child_process nothing is a process call', () => {
    const code = ["const cp = require('node:child_process');", 'cp.exec(`ls ${dir}`);', "cp.spawn(process.execPath, ['server.js'], { stdio: 'inherit' });", "cp.fork('./worker.js', [...extra]);", ''].join('\n');
    assert.deepEqual(found('a.cjs', code), [
      ['dynamic-process', 2, 'exec'],
      ['process-spawn', 3, 'spawn'],
      ['dynamic-process', 4, 'fork'],
    ]);
    assert.deepEqual(found('b.js', 'export const spawn = (x) => x; spawn(input);\n'), []);
  });

  it('vm, dynamic import, globalThis.eval and unicode-escaped identifiers', () => {
    const code = ["import vm from 'vm';", 'vm.runInNewContext(src);', 'new vm.Script(src);', 'await import(target);', "await import('node:path');", 'globalThis.eval(src);', 'const \\u0065val2 = 1;', ''].join('\n');
    assert.deepEqual(found('a.mjs', code), [
      ['dynamic-code', 2, 'vm.runInNewContext'],
      ['dynamic-code', 3, 'vm.Script'],
      ['dynamic-import', 4, null],
      ['eval', 6, null],
      ['escaped-identifier', 7, null],
    ]);
  });

  it('network: modules by import, require and re-export, and fetch / WebSocket globals; net is a raw socket too', () => {
    const code = ["import net from 'node:net';", "const ws = require('ws');", "export { request } from 'undici';", 'fetch(url);', 'new WebSocket(url);', ''].join('\n');
    assert.deepEqual(found('a.ts', code), [
      ['network', 1, 'net'],
      ['raw-socket', 1, 'net'],
      ['network', 2, 'ws'],
      ['network', 3, 'undici'],
      ['network', 4, 'fetch'],
      ['network', 5, 'WebSocket'],
    ]);
  });

  it('filesystem writes only when the file imports fs', () => {
    assert.deepEqual(found('a.ts', "import { writeFile } from 'node:fs/promises';\nawait writeFile(p, d);\n"), [['fs-write', 2, 'writeFile']]);
    assert.deepEqual(found('b.ts', 'await writeFile(p, d);\n'), []);
  });

  it('minified code and high-entropy literals; long prose strings are not blobs', () => {
    const random = Array.from({ length: 300 }, (_, i) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[(i * 37 + (i >> 3) * 11) % 64]).join('');
    assert.ok(entropy(random) >= 4.5);
    const minified = `var a=1;${'a=a+1;'.repeat(1000)}\nconst blob = '${random}';\n`;
    assert.deepEqual(found('m.js', minified), [['high-entropy-string', 2, null], ['minified', 1, null]]);
    assert.deepEqual(found('p.js', `const text = '${'the quick brown fox '.repeat(20)}';\n`), []);
  });

  it('TypeScript syntax parses (types, generics, assertions) and JSX too', () => {
    assert.deepEqual(found('a.ts', 'export function f<T extends object>(x: T): T { return eval(String(x)) as T; }\n'), [['eval', 1, null]]);
    assert.deepEqual(found('a.jsx', 'export const A = () => <div onClick={() => eval(code)} />;\n'), [['eval', 1, null]]);
  });
});
