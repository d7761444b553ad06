/**
 * @module verification/stages/static-analysis/analyse-file
 * What one JavaScript / TypeScript file does that matters for trust (issue #10), from its
 * syntax tree (the TypeScript compiler's parser, which reads JavaScript too), not from text
 * patterns: a call is a call, a string is a string, comments do not count. Which module a
 * call belongs to is judged per file: `spawn(…)` is a process call when the file imports
 * child_process, `writeFile(…)` a write when it imports fs. Findings carry a code and a line,
 * never the file's text.
 */
import type ts from 'typescript';
import { lazyRequire } from '../../../core/lazy-require.ts';
import type { FileFinding } from './file-finding.ts';
import { analysePython } from './python-scan.ts';
import { namesSecretPath } from './secret-paths.ts';

// The compiler loads on the first parse, not when this module is imported (issue #28).
const compiler = lazyRequire<typeof ts>('typescript');

export type { FileFinding, FileFindingCode } from './file-finding.ts';

const PROCESS_MODULES = new Set(['child_process', 'node:child_process']);
const PROCESS_CALLS = new Set(['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']);
const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'fs-extra', 'graceful-fs']);
const FS_WRITES = new Set(['writeFile', 'writeFileSync', 'appendFile', 'appendFileSync', 'createWriteStream', 'rm', 'rmSync', 'unlink', 'unlinkSync', 'rename', 'renameSync', 'chmod', 'chmodSync', 'copyFile', 'copyFileSync', 'symlink', 'symlinkSync', 'truncate', 'truncateSync', 'outputFile', 'outputFileSync']);
const VM_MODULES = new Set(['vm', 'node:vm']);
const VM_CALLS = new Set(['runInThisContext', 'runInNewContext', 'runInContext', 'compileFunction']);
/** Modules that open connections; `ws`, `undici`, `node-fetch`, `axios` are the usual clients. */
export const NETWORK_MODULES = new Set(['http', 'https', 'http2', 'net', 'dgram', 'tls', 'node:http', 'node:https', 'node:http2', 'node:net', 'node:dgram', 'node:tls', 'undici', 'ws', 'node-fetch', 'axios', 'got', 'socket.io-client']);
const NETWORK_GLOBALS = new Set(['fetch', 'WebSocket', 'XMLHttpRequest', 'EventSource']);
/** Modules that open raw TCP / UDP sockets (any port, any protocol: a database, a cache, the hub itself). */
const RAW_SOCKET_MODULES = new Set(['net', 'dgram', 'node:net', 'node:dgram']);
const WORKER_MODULES = new Set(['worker_threads', 'node:worker_threads']);
/** Calls that turn the whole environment into text or a list. */
const ENV_SERIALISERS = new Set(['JSON.stringify', 'util.inspect', 'inspect', 'String', 'console.log', 'console.error']);
const ENV_ENUMERATORS = new Set(['Object.keys', 'Object.values', 'Object.entries', 'Reflect.ownKeys', 'Object.getOwnPropertyNames']);

/** Shannon entropy in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function scriptKind(fileName: string): ts.ScriptKind {
  if (/\.tsx$/.test(fileName)) return compiler.ScriptKind.TSX;
  if (/\.(m|c)?ts$/.test(fileName)) return compiler.ScriptKind.TS;
  if (/\.jsx$/.test(fileName)) return compiler.ScriptKind.JSX;
  return compiler.ScriptKind.JS;
}

function isStaticString(node: ts.Node | undefined): boolean {
  return node !== undefined && (compiler.isStringLiteral(node) || compiler.isNoSubstitutionTemplateLiteral(node));
}

/** A value fixed in the code: a literal, an array of literals, or `process.execPath`. */
function isFixed(node: ts.Node | undefined): boolean {
  if (node === undefined) return true;
  if (isStaticString(node) || compiler.isNumericLiteral(node)) return true;
  if (compiler.isArrayLiteralExpression(node)) return node.elements.every((element) => isFixed(element));
  return compiler.isPropertyAccessExpression(node) && compiler.isIdentifier(node.expression) && node.expression.text === 'process' && node.name.text === 'execPath';
}

/** `{fromData: true}` when any of `nodes` is computed at run time (not a literal fixed in the code). */
function computed(...nodes: Array<ts.Node | undefined>): { fromData?: true } {
  return nodes.some((node) => node !== undefined && !isFixed(node)) ? { fromData: true } : {};
}

/** Whether `node` is `process.env` (or `globalThis.process.env`). */
function isProcessEnv(node: ts.Node | undefined): boolean {
  if (node === undefined || !compiler.isPropertyAccessExpression(node) || node.name.text !== 'env') return false;
  const target = node.expression;
  return (compiler.isIdentifier(target) && target.text === 'process') || (compiler.isPropertyAccessExpression(target) && target.name.text === 'process' && compiler.isIdentifier(target.expression) && target.expression.text === 'globalThis');
}

function calleeName(expression: ts.Expression): string | undefined {
  if (compiler.isIdentifier(expression)) return expression.text;
  if (compiler.isPropertyAccessExpression(expression)) return expression.name.text;
  return undefined;
}

const BLOB = /^(?:[0-9a-fA-F]{100,}|[A-Za-z0-9+/_-]{100,}={0,2})$/;

/** Module specifiers the file imports or requires with a literal name. */
function importedModules(source: ts.SourceFile): Map<string, number> {
  const modules = new Map<string, number>();
  const add = (name: string, node: ts.Node) => {
    if (!modules.has(name)) modules.set(name, source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
  };
  const visit = (node: ts.Node): void => {
    if ((compiler.isImportDeclaration(node) || compiler.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && compiler.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node);
    else if (compiler.isImportEqualsDeclaration(node) && compiler.isExternalModuleReference(node.moduleReference) && compiler.isStringLiteral(node.moduleReference.expression)) add(node.moduleReference.expression.text, node);
    else if (compiler.isCallExpression(node) && (node.expression.kind === compiler.SyntaxKind.ImportKeyword || (compiler.isIdentifier(node.expression) && node.expression.text === 'require')) && isStaticString(node.arguments[0])) {
      add((node.arguments[0] as ts.StringLiteral).text, node);
    }
    compiler.forEachChild(node, visit);
  };
  visit(source);
  return modules;
}

interface Scope {
  source: ts.SourceFile;
  process: boolean;
  fs: boolean;
  vm: boolean;
  worker: boolean;
  findings: FileFinding[];
  /** Literals already reported as a decoded blob (not reported again as high-entropy strings). */
  decoded: Set<ts.Node>;
  line(node: ts.Node): number;
}

function checkCall(node: ts.CallExpression, scope: Scope): void {
  const name = calleeName(node.expression);
  const [first, second] = node.arguments;
  if (node.expression.kind === compiler.SyntaxKind.ImportKeyword) {
    if (!isStaticString(first)) scope.findings.push({ code: 'dynamic-import', line: scope.line(node) });
    return;
  }
  if (compiler.isIdentifier(node.expression) && name === 'require') {
    if (!isStaticString(first)) scope.findings.push({ code: 'dynamic-require', line: scope.line(node) });
    return;
  }
  if (name === undefined) return;
  if (isProcessEnv(first)) {
    const callee = node.expression.getText(scope.source);
    if (ENV_SERIALISERS.has(callee)) scope.findings.push({ code: 'env-serialisation', line: scope.line(node), detail: `${callee}(process.env)` });
    else if (ENV_ENUMERATORS.has(callee)) scope.findings.push({ code: 'env-enumeration', line: scope.line(node), detail: `${callee}(process.env)` });
  }
  if (scope.process && PROCESS_CALLS.has(name)) {
    // exec / execSync take one shell string; spawn, execFile and fork take (command, args?, options?).
    const shellString = name === 'exec' || name === 'execSync';
    const argsFixed = shellString || isFixed(second) || (second !== undefined && compiler.isObjectLiteralExpression(second));
    const fixed = isFixed(first) && argsFixed;
    scope.findings.push({ code: fixed ? 'process-spawn' : 'dynamic-process', line: scope.line(node), detail: name, ...(fixed ? {} : { fromData: true as const }) });
  } else if (name === 'eval' && (compiler.isIdentifier(node.expression) || /^(globalThis|window|global|self)\.eval$/.test(node.expression.getText(scope.source)))) {
    scope.findings.push({ code: 'eval', line: scope.line(node), ...computed(first) });
  } else if (name === 'Function' && compiler.isIdentifier(node.expression)) {
    scope.findings.push({ code: 'dynamic-code', line: scope.line(node), detail: 'Function', ...computed(...node.arguments) });
  } else if (scope.vm && VM_CALLS.has(name)) {
    scope.findings.push({ code: 'dynamic-code', line: scope.line(node), detail: `vm.${name}`, ...computed(first) });
  } else if (scope.fs && FS_WRITES.has(name)) {
    scope.findings.push({ code: 'fs-write', line: scope.line(node), detail: name });
  } else if (compiler.isIdentifier(node.expression) && NETWORK_GLOBALS.has(name)) {
    scope.findings.push({ code: 'network', line: scope.line(node), detail: name });
  }
  const decoded = name === 'atob' || (name === 'from' && /^Buffer\.from$/.test(node.expression.getText(scope.source)) && second !== undefined && isStaticString(second) && /^(base64|base64url|hex)$/.test((second as ts.StringLiteral).text));
  if (decoded && isStaticString(first) && BLOB.test((first as ts.StringLiteral).text)) {
    scope.findings.push({ code: 'encoded-blob', line: scope.line(node) });
    scope.decoded.add(first!);
  }
}

/** `new Worker(code, { eval: true })`: the first argument is code, not a file. */
function workerEvaluates(node: ts.NewExpression): boolean {
  const options = node.arguments?.[1];
  return options !== undefined && compiler.isObjectLiteralExpression(options) && options.properties.some((property) => compiler.isPropertyAssignment(property) && (compiler.isIdentifier(property.name) || compiler.isStringLiteral(property.name)) && property.name.text === 'eval' && property.initializer.kind === compiler.SyntaxKind.TrueKeyword);
}

function checkNode(node: ts.Node, scope: Scope, counters: { obfuscatedNames: number; firstObfuscated: number }): void {
  if (compiler.isCallExpression(node)) checkCall(node, scope);
  else if (compiler.isNewExpression(node)) {
    const name = calleeName(node.expression);
    if (name === 'Function' && compiler.isIdentifier(node.expression)) scope.findings.push({ code: 'dynamic-code', line: scope.line(node), detail: 'Function', ...computed(...(node.arguments ?? [])) });
    else if (name === 'Script' && scope.vm) scope.findings.push({ code: 'dynamic-code', line: scope.line(node), detail: 'vm.Script', ...computed(node.arguments?.[0]) });
    else if (name === 'Worker' && scope.worker && workerEvaluates(node)) scope.findings.push({ code: 'dynamic-code', line: scope.line(node), detail: 'Worker with eval', ...computed(node.arguments?.[0]) });
    else if (name !== undefined && compiler.isIdentifier(node.expression) && NETWORK_GLOBALS.has(name)) scope.findings.push({ code: 'network', line: scope.line(node), detail: name });
  } else if (compiler.isForInStatement(node) && isProcessEnv(node.expression)) {
    scope.findings.push({ code: 'env-enumeration', line: scope.line(node), detail: 'for…in process.env' });
  } else if (compiler.isElementAccessExpression(node) && isStaticString(node.argumentExpression) && /\\[xu]/.test(node.argumentExpression.getText(scope.source))) {
    scope.findings.push({ code: 'escaped-identifier', line: scope.line(node) });
  } else if (compiler.isIdentifier(node)) {
    if (/\\u/.test(node.getText(scope.source))) scope.findings.push({ code: 'escaped-identifier', line: scope.line(node) });
    else if (/^_0x[0-9a-f]{3,}$/i.test(node.text) && counters.obfuscatedNames++ === 0) counters.firstObfuscated = scope.line(node);
  } else if (compiler.isTemplateHead(node) || compiler.isTemplateMiddle(node) || compiler.isTemplateTail(node)) {
    if (namesSecretPath(node.text)) scope.findings.push({ code: 'secret-path', line: scope.line(node) });
  } else if (isStaticString(node) && !scope.decoded.has(node)) {
    const text = (node as ts.StringLiteral).text;
    if (namesSecretPath(text)) scope.findings.push({ code: 'secret-path', line: scope.line(node) });
    if (text.length >= 200 && !/\s/.test(text) && entropy(text) >= 4.5) scope.findings.push({ code: 'high-entropy-string', line: scope.line(node) });
  }
}

function minifiedLine(text: string): number | undefined {
  if (text.length < 5_000) return undefined;
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.length > 2_000);
  if (index >= 0) return index + 1;
  return text.length / lines.length > 500 ? 1 : undefined;
}

/** Findings of one file's text (`fileName` picks the dialect by extension; `.py` goes to the Python scanner). */
export function analyseSource(fileName: string, text: string): FileFinding[] {
  if (/\.py$/.test(fileName)) return analysePython(text);
  const source = compiler.createSourceFile(fileName, text, compiler.ScriptTarget.Latest, false, scriptKind(fileName));
  const modules = importedModules(source);
  const has = (set: Set<string>) => [...modules.keys()].some((name) => set.has(name));
  const scope: Scope = {
    source,
    process: has(PROCESS_MODULES),
    fs: has(FS_MODULES),
    vm: has(VM_MODULES),
    worker: has(WORKER_MODULES),
    findings: [],
    decoded: new Set(),
    line: (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
  };
  for (const [name, line] of modules) {
    if (NETWORK_MODULES.has(name)) scope.findings.push({ code: 'network', line, detail: name.replace(/^node:/, '') });
    if (RAW_SOCKET_MODULES.has(name)) scope.findings.push({ code: 'raw-socket', line, detail: name.replace(/^node:/, '') });
  }
  const counters = { obfuscatedNames: 0, firstObfuscated: 0 };
  const visit = (node: ts.Node): void => {
    checkNode(node, scope, counters);
    compiler.forEachChild(node, visit);
  };
  visit(source);
  if (counters.obfuscatedNames >= 10) scope.findings.push({ code: 'obfuscated-identifiers', line: counters.firstObfuscated, detail: `${counters.obfuscatedNames} _0x names` });
  const minified = minifiedLine(text);
  if (minified !== undefined) scope.findings.push({ code: 'minified', line: minified });
  return scope.findings;
}
