/**
 * The construction order of docs/engineering.md, kept true (issue #28): `createApp` builds its
 * parts in the order the page draws, each part receives only parts built before it, and a late
 * link is an event (core/events.ts), never a variable a closure captures before it is assigned.
 * Read from the source with the TypeScript parser and binder: a forward reference hidden in a
 * callback (the `let selection` of old) fails here although it compiles.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const appPath = fileURLToPath(new URL('../src/app.ts', import.meta.url));
const appTypePath = fileURLToPath(new URL('../src/composition/app-type.ts', import.meta.url));
const docsPath = fileURLToPath(new URL('../docs/engineering.md', import.meta.url));

/** Variables the composition root may reassign: its own state, not a wired part. */
const MUTABLE_STATE = new Set(['closed']);

interface Wiring {
  /** Names bound by the statements of `createApp` (its try block flattened), in source order. */
  declared: string[];
  /** Problems: a `let` of a part, or a name used in a statement before the one that declares it. */
  problems: string[];
  /** The members of the `App` interface, when `text` declares it. */
  appMembers: string[];
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : bindingNames(element.name)));
}

/** Reads a composition root: the function `createApp` and the interface `App` of `text`. */
export function readWiring(text: string, fileName = 'app.ts'): Wiring {
  const program = ts.createProgram({
    rootNames: [fileName],
    options: { noResolve: true, noLib: true, allowImportingTsExtensions: true, noEmit: true },
    host: {
      ...ts.createCompilerHost({}),
      getSourceFile: (name, version) => (name === fileName ? ts.createSourceFile(name, text, version, true) : undefined),
      fileExists: (name) => name === fileName,
      readFile: (name) => (name === fileName ? text : undefined),
    },
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(fileName)!;
  const createApp = source.statements.find((statement): statement is ts.FunctionDeclaration => ts.isFunctionDeclaration(statement) && statement.name?.text === 'createApp');
  assert.ok(createApp?.body, `${fileName} has no function createApp`);
  const appInterface = source.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === 'App');
  const appMembers = (appInterface?.members ?? []).flatMap((member) => (member.name && ts.isIdentifier(member.name) ? [member.name.text] : []));
  const statements = createApp.body.statements.flatMap((statement) => (ts.isTryStatement(statement) ? [...statement.tryBlock.statements] : [statement]));

  const declared: string[] = [];
  const problems: string[] = [];
  // Where each name of the body is declared: the index of its statement.
  const declaredAt = new Map<ts.Symbol, { name: string; index: number }>();
  statements.forEach((statement, index) => {
    if (!ts.isVariableStatement(statement)) return;
    const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const declaration of statement.declarationList.declarations) {
      for (const name of bindingNames(declaration.name)) {
        declared.push(name);
        if (!isConst && !MUTABLE_STATE.has(name)) problems.push(`'${name}' is a let: a part is built once, as a const, where it is first needed`);
      }
      const visitNames = (node: ts.Node): void => {
        if (ts.isIdentifier(node)) {
          const symbol = checker.getSymbolAtLocation(node);
          if (symbol) declaredAt.set(symbol, { name: node.text, index });
        }
        node.forEachChild(visitNames);
      };
      visitNames(declaration.name);
    }
  });
  statements.forEach((statement, index) => {
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const symbol = ts.isShorthandPropertyAssignment(node.parent) ? checker.getShorthandAssignmentValueSymbol(node.parent) : checker.getSymbolAtLocation(node);
        const target = symbol ? declaredAt.get(symbol) : undefined;
        if (target && target.index > index) problems.push(`'${target.name}' is used at line ${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} before the statement that builds it`);
      }
      node.forEachChild(visit);
    };
    visit(statement);
  });
  return { declared, problems, appMembers };
}

/** The names of the "Construction order" list of docs/engineering.md, in order. */
function documentedOrder(): string[] {
  const text = readFileSync(docsPath, 'utf8');
  const section = /### Construction order\n([\s\S]*?)\n#/.exec(text)?.[1];
  assert.ok(section, 'docs/engineering.md has no "### Construction order" section');
  const line = section.split('\n').find((candidate) => candidate.includes(' → '));
  assert.ok(line, 'the construction order section has no line of parts joined by →');
  return [...line.matchAll(/`(\w+)`/g)].map((match) => match[1]!);
}

/** The App members that are not wired parts: configuration, the store and the app's own methods. */
const NOT_PARTS = new Set(['config', 'logger', 'db', 'migrations', 'apiModules', 'close']);

describe('construction order', () => {
  it('names a captured let and a part used before it is built (planted)', () => {
    const planted = [
      'export interface App { a: number; b: number }',
      'export async function createApp(): Promise<App> {',
      '  let b: number | undefined;',
      '  try {',
      '    const a = makeA({ onEvent: () => c.run(), b });',
      '    const c = makeC(a);',
      '    b = 2;',
      '    let closed = false;',
      '    return { a, b: b ?? 0 };',
      '  } catch (error) { throw error; }',
      '}',
    ].join('\n');
    const wiring = readWiring(planted);
    assert.deepEqual(wiring.declared, ['b', 'a', 'c', 'closed']);
    assert.deepEqual(wiring.problems, ["'b' is a let: a part is built once, as a const, where it is first needed", "'c' is used at line 5 before the statement that builds it"]);
    assert.deepEqual(wiring.appMembers, ['a', 'b']);
  });

  it('createApp builds every part once, as a const, after everything it receives', () => {
    const wiring = readWiring(readFileSync(appPath, 'utf8'), appPath);
    assert.ok(wiring.declared.includes('supervisor') && wiring.declared.includes('rollouts'), `the walk found no parts: ${wiring.declared.join(', ')}`);
    assert.deepEqual(wiring.problems, [], `late links in createApp (docs/engineering.md, "Construction order"):\n  ${wiring.problems.join('\n  ')}`);
  });

  it('createApp builds the parts in the order docs/engineering.md draws, and the drawing names every part of App', () => {
    const wiring = readWiring(readFileSync(appPath, 'utf8'), appPath);
    const documented = documentedOrder();
    const missing = documented.filter((name) => !wiring.declared.includes(name));
    assert.deepEqual(missing, [], 'documented parts that createApp does not build');
    const built = wiring.declared.filter((name) => documented.includes(name));
    assert.deepEqual(built, documented, 'the order createApp builds them in');
    const appMembers = readWiring(`${readFileSync(appTypePath, 'utf8')}\nexport async function createApp() {}`, appTypePath).appMembers;
    assert.ok(appMembers.includes('supervisor'), `no App members read from ${appTypePath}`);
    const undocumented = appMembers.filter((name) => !NOT_PARTS.has(name) && !documented.includes(name));
    assert.deepEqual(undocumented, [], 'parts of App missing from the drawing');
  });
});
