/**
 * @module verification/stages/static-analysis/python-scan
 * What one Python file does that matters for trust (issue #23). There is no Python parser in
 * this Node process, so this is a careful tokenizer-level scanner, not a syntax tree: it
 * tokenizes like Python's own tokenizer for what matters here — `#` comments dropped, string
 * literals (every prefix r/b/u/f and their combinations, single, double and triple quotes,
 * escapes, implicit line joins inside brackets) kept as one token with their value — so a
 * word inside a comment or a docstring never counts, and then matches token sequences:
 * imports with their aliases (`import subprocess as sp`, `from os import system`), dotted
 * calls resolved through those aliases, and their arguments up to the matching bracket.
 *
 * Limits, said plainly: names are resolved per file and only through imports (an object
 * passed around under another name is not followed), f-string interpolations are not
 * scanned as code, and `getattr(module, name)` style indirection is reported only when its
 * name argument is computed. Findings use the JavaScript analyser's codes and rules.
 */
import type { FileFinding } from './file-finding.ts';
import { namesSecretPath } from './secret-paths.ts';

/** One token: a name, a string literal (value without quotes or prefix), a number, or an operator character. */
export interface PyToken {
  kind: 'name' | 'string' | 'number' | 'op';
  text: string;
  line: number;
  /** The first token of a logical line (a string there alone is a docstring or a bare expression). */
  start?: true;
}

const STRING_PREFIX = /^(?:[rRbBuUfF]{1,2})?(?:'''|"""|'|")/;

/** Tokenizes Python source; comments are dropped, newlines are not tokens (bracket depth decides calls). */
export function tokenizePython(source: string): PyToken[] {
  const tokens: PyToken[] = [];
  let line = 1;
  let index = 0;
  let depth = 0;
  let lineStart = true;
  const length = source.length;
  const push = (token: PyToken): void => {
    tokens.push(lineStart ? { ...token, start: true } : token);
    lineStart = false;
  };
  while (index < length) {
    const char = source[index]!;
    if (char === '\n') {
      line++;
      index++;
      // Inside brackets a newline only continues the line (implicit joining).
      if (depth === 0) lineStart = true;
      continue;
    }
    if (char === '\\' && source[index + 1] === '\n') {
      line++;
      index += 2;
      continue;
    }
    if (char === ' ' || char === '\t' || char === '\r' || char === '\f' || char === '\\' || char === ';') {
      if (char === ';' && depth === 0) lineStart = true;
      index++;
      continue;
    }
    if (char === '#') {
      while (index < length && source[index] !== '\n') index++;
      continue;
    }
    const prefix = STRING_PREFIX.exec(source.slice(index, index + 5));
    if (prefix !== null) {
      const opening = prefix[0];
      const quote = opening.endsWith('"""') || opening.endsWith("'''") ? opening.slice(-3) : opening.slice(-1);
      const raw = /[rR]/.test(opening.slice(0, opening.length - quote.length));
      const start = line;
      index += opening.length;
      let value = '';
      while (index < length) {
        const current = source[index]!;
        if (source.startsWith(quote, index)) {
          index += quote.length;
          break;
        }
        // A single-quoted string ends at an unescaped newline (a syntax error in Python: stop there).
        if (current === '\n' && quote.length === 1) break;
        if (current === '\n') line++;
        if (current === '\\' && index + 1 < length) {
          const next = source[index + 1]!;
          if (next === '\n') line++;
          value += raw ? current + next : next === 'n' ? '\n' : next === 't' ? '\t' : next;
          index += 2;
          continue;
        }
        value += current;
        index++;
      }
      push({ kind: 'string', text: value, line: start });
      continue;
    }
    if (/[A-Za-z_\u0080-\uffff]/.test(char)) {
      let end = index + 1;
      while (end < length && /[A-Za-z0-9_\u0080-\uffff]/.test(source[end]!)) end++;
      push({ kind: 'name', text: source.slice(index, end), line });
      index = end;
      continue;
    }
    if (/[0-9]/.test(char)) {
      let end = index + 1;
      while (end < length && /[0-9A-Za-z_.]/.test(source[end]!)) end++;
      push({ kind: 'number', text: source.slice(index, end), line });
      index = end;
      continue;
    }
    if ('([{'.includes(char)) depth++;
    else if (')]}'.includes(char)) depth = Math.max(0, depth - 1);
    push({ kind: 'op', text: char, line });
    index++;
  }
  return tokens;
}

/** Process calls: qualified name → whether its first argument is one shell string. */
const PROCESS_CALLS: ReadonlyMap<string, { shell: boolean }> = new Map([
  ...['run', 'call', 'check_call', 'check_output', 'Popen'].map((name) => [`subprocess.${name}`, { shell: false }] as const),
  ...['getoutput', 'getstatusoutput'].map((name) => [`subprocess.${name}`, { shell: true }] as const),
  ['os.system', { shell: true }],
  ['os.popen', { shell: true }],
  ['commands.getoutput', { shell: true }],
  ['asyncio.create_subprocess_shell', { shell: true }],
  ['asyncio.create_subprocess_exec', { shell: false }],
  ['pty.spawn', { shell: false }],
  ...['execl', 'execle', 'execlp', 'execlpe', 'execv', 'execve', 'execvp', 'execvpe', 'spawnl', 'spawnle', 'spawnlp', 'spawnv', 'spawnve', 'spawnvp', 'posix_spawn', 'posix_spawnp'].map((name) => [`os.${name}`, { shell: false }] as const),
]);
const CODE_BUILTINS = new Set(['exec', 'eval', 'compile']);
const DESERIALISERS = new Set(['pickle.loads', 'pickle.load', 'pickle.Unpickler', 'cPickle.loads', 'cPickle.load', '_pickle.loads', 'marshal.loads', 'marshal.load', 'dill.loads', 'dill.load', 'shelve.open', 'jsonpickle.decode', 'cloudpickle.loads', 'joblib.load']);
const SOCKET_CALLS = new Set(['socket.socket', 'socket.create_connection', 'socket.socketpair', 'socket.fromfd', 'asyncio.open_connection']);
const NETWORK_MODULES = new Set(['requests', 'httpx', 'aiohttp', 'urllib.request', 'urllib3', 'http.client', 'httplib2', 'pycurl', 'websockets', 'websocket', 'ftplib', 'smtplib', 'paramiko', 'telnetlib']);
const DYNAMIC_IMPORTS = new Set(['__import__', 'importlib.import_module', 'importlib.__import__']);
const SERIALISERS = new Set(['json.dumps', 'json.dump', 'str', 'repr', 'print', 'pprint.pprint', 'pprint.pformat', 'yaml.dump', 'pickle.dumps']);
const ENUMERATORS = new Set(['items', 'keys', 'values']);

/** The dotted name starting at `start` (`a`, `.`, `b`…) and the index after it. */
function dottedAt(tokens: readonly PyToken[], start: number): { name: string; end: number } {
  let name = tokens[start]!.text;
  let end = start + 1;
  while (tokens[end]?.text === '.' && tokens[end + 1]?.kind === 'name') {
    name += `.${tokens[end + 1]!.text}`;
    end += 2;
  }
  return { name, end };
}

/** The arguments of a call whose `(` is at `open`: each as its tokens, and the index after `)`. */
function callArguments(tokens: readonly PyToken[], open: number): { args: PyToken[][]; end: number } {
  const args: PyToken[][] = [];
  let current: PyToken[] = [];
  let depth = 0;
  let index = open + 1;
  for (; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.kind === 'op' && '([{'.includes(token.text)) depth++;
    if (token.kind === 'op' && ')]}'.includes(token.text)) {
      if (depth === 0) break;
      depth--;
    }
    if (depth === 0 && token.kind === 'op' && token.text === ',') {
      args.push(current);
      current = [];
      continue;
    }
    current.push(token);
  }
  if (current.length > 0) args.push(current);
  return { args, end: index + 1 };
}

/** A literal fixed in the code: a string, a number, or a list / tuple of them. */
function isFixed(arg: readonly PyToken[] | undefined): boolean {
  if (arg === undefined || arg.length === 0) return true;
  return arg.every((token) => token.kind === 'string' || token.kind === 'number' || (token.kind === 'op' && '[](),'.includes(token.text)));
}

function keyword(args: readonly PyToken[][], name: string): PyToken[] | undefined {
  const arg = args.find((tokens) => tokens[0]?.kind === 'name' && tokens[0].text === name && tokens[1]?.text === '=' && tokens[2]?.text !== '=');
  return arg?.slice(2);
}

/** Resolves a dotted name through the file's imports: `sp.run` → `subprocess.run`, `system` → `os.system`. */
function resolve(name: string, aliases: ReadonlyMap<string, string>): string {
  const [head, ...rest] = name.split('.');
  const target = aliases.get(head!);
  return target === undefined ? name : [target, ...rest].join('.');
}

/** Reads the import statements: local name → qualified name, and every module imported. */
function readImports(tokens: readonly PyToken[]): { aliases: Map<string, string>; modules: Map<string, number> } {
  const aliases = new Map<string, string>();
  const modules = new Map<string, number>();
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.kind !== 'name') continue;
    const previous = tokens[index - 1];
    if (previous !== undefined && previous.kind === 'op' && previous.text === '.') continue;
    if (token.text === 'import' && tokens[index - 2]?.text !== 'from' && tokens[index + 1]?.kind === 'name') {
      let cursor = index + 1;
      while (tokens[cursor]?.kind === 'name') {
        const { name, end } = dottedAt(tokens, cursor);
        modules.set(name, modules.get(name) ?? token.line);
        let local = name.split('.')[0]!;
        let target = local;
        cursor = end;
        if (tokens[cursor]?.text === 'as' && tokens[cursor + 1]?.kind === 'name') {
          local = tokens[cursor + 1]!.text;
          target = name;
          cursor += 2;
        }
        aliases.set(local, target);
        if (tokens[cursor]?.text !== ',') break;
        cursor++;
      }
    } else if (token.text === 'from' && tokens[index + 1]?.kind === 'name') {
      const { name: module, end } = dottedAt(tokens, index + 1);
      if (tokens[end]?.text !== 'import') continue;
      modules.set(module, modules.get(module) ?? token.line);
      let cursor = end + 1;
      if (tokens[cursor]?.text === '(') cursor++;
      while (tokens[cursor]?.kind === 'name') {
        const imported = tokens[cursor]!.text;
        let local = imported;
        cursor++;
        if (tokens[cursor]?.text === 'as' && tokens[cursor + 1]?.kind === 'name') {
          local = tokens[cursor + 1]!.text;
          cursor += 2;
        }
        aliases.set(local, `${module}.${imported}`);
        modules.set(`${module}.${imported}`, modules.get(`${module}.${imported}`) ?? token.line);
        if (tokens[cursor]?.text !== ',') break;
        cursor++;
      }
    }
  }
  return { aliases, modules };
}

const isEnviron = (name: string) => name === 'os.environ' || name === 'os.environb';

/** Findings of one Python file's text (see the module comment for what is and is not seen). */
export function analysePython(text: string): FileFinding[] {
  const tokens = tokenizePython(text);
  const { aliases, modules } = readImports(tokens);
  const findings: FileFinding[] = [];
  for (const [module, line] of modules) {
    const top = module.split('.').slice(0, 2).join('.');
    if (NETWORK_MODULES.has(module) || NETWORK_MODULES.has(top) || NETWORK_MODULES.has(module.split('.')[0]!)) findings.push({ code: 'network', line, detail: module });
  }
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.kind === 'string') {
      // A string standing alone on its line is a docstring (documentation), not a value the code uses.
      const next = tokens[index + 1];
      const docstring = token.start === true && (next === undefined || next.start === true);
      if (!docstring && namesSecretPath(token.text)) findings.push({ code: 'secret-path', line: token.line });
      continue;
    }
    if (token.kind !== 'name') continue;
    const previous = tokens[index - 1];
    // An attribute (`x.eval`) is not a builtin, and a definition (`def exec(`) is not a call.
    if (previous?.kind === 'op' && previous.text === '.') continue;
    if (previous?.kind === 'name' && (previous.text === 'def' || previous.text === 'class' || previous.text === 'import')) continue;
    const { name: raw, end } = dottedAt(tokens, index);
    const name = resolve(raw, aliases);
    const method = /^os\.environb?\.(\w+)$/.exec(name)?.[1];
    const enumerated = method !== undefined && ENUMERATORS.has(method) && tokens[end]?.text === '(';
    const iterated = isEnviron(name) && previous?.kind === 'name' && previous.text === 'in' && [':', ')', ']', '}'].includes(tokens[end]?.text ?? '');
    if (enumerated || iterated) findings.push({ code: 'env-enumeration', line: token.line, detail: 'os.environ' });
    if (tokens[end]?.text !== '(') {
      index = end - 1;
      continue;
    }
    const { args } = callArguments(tokens, end);
    const first = args[0];
    if (CODE_BUILTINS.has(name) && !aliases.has(raw)) {
      findings.push({ code: name === 'eval' ? 'eval' : 'dynamic-code', line: token.line, detail: name, ...(isFixed(first) ? {} : { fromData: true }) });
    } else if (PROCESS_CALLS.has(name)) {
      const shellFlag = keyword(args, 'shell');
      const shellOn = PROCESS_CALLS.get(name)!.shell || (shellFlag !== undefined && !(shellFlag.length === 1 && shellFlag[0]!.text === 'False'));
      // A command fixed in the code is only noted; one computed at run time runs whatever reaches it.
      const dynamic = !isFixed(first);
      findings.push({ code: dynamic ? 'dynamic-process' : 'process-spawn', line: token.line, detail: `${name}${shellOn ? ' (shell)' : ''}`, ...(dynamic ? { fromData: true } : {}) });
    } else if (DESERIALISERS.has(name) || (name === 'yaml.load' && !args.some((arg) => arg.some((t) => /Safe|BaseLoader/.test(t.text))))) {
      findings.push({ code: 'unsafe-deserialise', line: token.line, detail: name, ...(isFixed(first) ? {} : { fromData: true }) });
    } else if (SOCKET_CALLS.has(name)) {
      findings.push({ code: 'raw-socket', line: token.line, detail: name });
    } else if (DYNAMIC_IMPORTS.has(name) && !isFixed(first)) {
      findings.push({ code: 'dynamic-import', line: token.line, detail: name });
    } else if ((name === 'getattr' || name === 'builtins.getattr') && args.length >= 2 && !isFixed(args[1])) {
      findings.push({ code: 'dynamic-require', line: token.line, detail: 'getattr with a computed name' });
    } else if ((SERIALISERS.has(name) || name === 'dict') && first !== undefined) {
      const whole = isEnviron(resolve(dottedAt(first, 0).name, aliases)) && dottedAt(first, 0).end === first.length;
      if (whole && name !== 'dict') findings.push({ code: 'env-serialisation', line: token.line, detail: `${name}(os.environ)` });
    }
    index = end - 1;
  }
  return findings;
}
