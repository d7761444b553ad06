/**
 * @module intelligence/sources/code-scan
 * Finds the MCP tool registrations in a plugin's source by parsing it with the TypeScript
 * compiler (the parser reads JavaScript too), never by running it: `server.registerTool(name,
 * config, handler)` and the older `server.tool(name, [description], [shape], [annotations],
 * handler)` of the MCP TypeScript SDK. Identifiers used as a config, shape or handler are
 * resolved to the `const` or function of that name declared in any scanned file, which covers
 * shapes and handlers declared apart from the registration (the common style).
 */
import type ts from 'typescript';
import { lazyRequire } from '../../core/lazy-require.ts';
import type { CodeText } from './code-files.ts';
import type { JsonObject } from '../types.ts';

// The compiler loads on the first parse, not when this module is imported (issue #28).
const compiler = lazyRequire<typeof ts>('typescript');

/** One tool registration found in the source. */
export interface ToolRegistration {
  name: string;
  /** `path:line` of the registration. */
  location: string;
  /** Whether the file is TypeScript (its definitions win over compiled JavaScript of the same tool). */
  typescript: boolean;
  config: ts.ObjectLiteralExpression | undefined;
  description: ts.Expression | undefined;
  shape: ts.Expression | undefined;
  annotations: ts.Expression | undefined;
  handler: ts.Node | undefined;
}

/** The registrations of every file plus the top-level declarations identifiers resolve to. */
export interface CodeScan {
  registrations: ToolRegistration[];
  declarations: Map<string, ts.Node>;
}

const scriptKind = (path: string): ts.ScriptKind =>
  /\.(m|c)?tsx$/.test(path) ? compiler.ScriptKind.TSX : /\.(m|c)?ts$/.test(path) ? compiler.ScriptKind.TS : /x$/.test(path) ? compiler.ScriptKind.JSX : compiler.ScriptKind.JS;

/** Collects `const NAME = …` and `function NAME` declarations at the top level of a file. */
function collectDeclarations(file: ts.SourceFile, into: Map<string, ts.Node>): void {
  for (const statement of file.statements) {
    if (compiler.isFunctionDeclaration(statement) && statement.name !== undefined && !into.has(statement.name.text)) into.set(statement.name.text, statement);
    if (compiler.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (compiler.isIdentifier(declaration.name) && declaration.initializer !== undefined && !into.has(declaration.name.text)) into.set(declaration.name.text, declaration.initializer);
      }
    }
  }
}

/** An identifier resolved to what it was declared as (at most a few hops), else the expression itself. */
export function resolveNode(node: ts.Node | undefined, declarations: ReadonlyMap<string, ts.Node>): ts.Node | undefined {
  let current = node;
  for (let hop = 0; hop < 5 && current !== undefined; hop++) {
    while (current !== undefined && (compiler.isAsExpression(current) || compiler.isSatisfiesExpression(current) || compiler.isParenthesizedExpression(current))) current = current.expression;
    if (current === undefined || !compiler.isIdentifier(current)) return current;
    const next = declarations.get(current.text);
    if (next === undefined) return current;
    current = next;
  }
  return current;
}

const isStringLike = (node: ts.Node | undefined): node is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral =>
  node !== undefined && (compiler.isStringLiteral(node) || compiler.isNoSubstitutionTemplateLiteral(node));

const isFunctionLike = (node: ts.Node | undefined): boolean =>
  node !== undefined && (compiler.isArrowFunction(node) || compiler.isFunctionExpression(node) || compiler.isFunctionDeclaration(node));

const ANNOTATION_KEYS = new Set(['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']);

/** Whether an object literal looks like MCP tool annotations rather than a zod shape. */
function looksLikeAnnotations(node: ts.Node | undefined): boolean {
  if (node === undefined || !compiler.isObjectLiteralExpression(node) || node.properties.length === 0) return false;
  return node.properties.every((property) => property.name !== undefined && compiler.isIdentifier(property.name) && ANNOTATION_KEYS.has(property.name.text));
}

/** The member `key` of an object literal, if present. */
export function member(object: ts.ObjectLiteralExpression | undefined, key: string): ts.Expression | undefined {
  for (const property of object?.properties ?? []) {
    if (compiler.isPropertyAssignment(property) && (compiler.isIdentifier(property.name) || compiler.isStringLiteral(property.name)) && property.name.text === key) return property.initializer;
    if (compiler.isShorthandPropertyAssignment(property) && property.name.text === key) return property.name;
  }
  return undefined;
}

/** Reads the arguments of `tool(name, …)` after the name (SDK overloads). */
function legacyArguments(rest: readonly ts.Expression[], declarations: ReadonlyMap<string, ts.Node>): Pick<ToolRegistration, 'description' | 'shape' | 'annotations' | 'handler'> {
  const args = [...rest];
  const handler = args.pop();
  let description: ts.Expression | undefined;
  if (args.length > 0 && isStringLike(resolveNode(args[0], declarations))) description = args.shift();
  const shape = args.length > 0 && !looksLikeAnnotations(resolveNode(args[0], declarations)) ? args.shift() : undefined;
  const annotations = args.shift();
  return { description, shape, annotations, handler };
}

function registrationOf(call: ts.CallExpression, file: ts.SourceFile, path: string, declarations: ReadonlyMap<string, ts.Node>): ToolRegistration | undefined {
  if (!compiler.isPropertyAccessExpression(call.expression)) return undefined;
  const method = call.expression.name.text;
  if (method !== 'registerTool' && method !== 'tool') return undefined;
  const [first, ...rest] = call.arguments;
  const name = resolveNode(first, declarations);
  if (!isStringLike(name) || rest.length === 0) return undefined;
  const location = `${path}:${file.getLineAndCharacterOfPosition(call.getStart(file)).line + 1}`;
  const typescript = /\.(m|c)?tsx?$/.test(path);
  if (method === 'registerTool') {
    const resolved = resolveNode(rest[0], declarations);
    const config = resolved !== undefined && compiler.isObjectLiteralExpression(resolved) ? resolved : undefined;
    return {
      name: name.text, location, typescript, config,
      description: member(config, 'description'),
      shape: member(config, 'inputSchema'),
      annotations: member(config, 'annotations'),
      handler: rest[1],
    };
  }
  if (!isFunctionLike(resolveNode(rest[rest.length - 1], declarations))) return undefined;
  return { name: name.text, location, typescript, config: undefined, ...legacyArguments(rest, declarations) };
}

/** Parses every file and finds its tool registrations. */
export function scanCode(files: readonly CodeText[]): CodeScan {
  const parsed = files.map((file) => ({ path: file.path, source: compiler.createSourceFile(file.path, file.text, compiler.ScriptTarget.Latest, true, scriptKind(file.path)) }));
  const declarations = new Map<string, ts.Node>();
  // TypeScript first: its declarations carry the types and comments compiled output may lose.
  for (const { path, source } of [...parsed].sort((a, b) => Number(/\.(m|c)?tsx?$/.test(b.path)) - Number(/\.(m|c)?tsx?$/.test(a.path)))) {
    void path;
    collectDeclarations(source, declarations);
  }
  const registrations: ToolRegistration[] = [];
  for (const { path, source } of parsed) {
    const visit = (node: ts.Node): void => {
      if (compiler.isCallExpression(node)) {
        const registration = registrationOf(node, source, path, declarations);
        if (registration !== undefined) registrations.push(registration);
      }
      compiler.forEachChild(node, visit);
    };
    visit(source);
  }
  return { registrations: preferTypeScript(registrations), declarations };
}

/** One registration per tool name: a TypeScript file's over compiled JavaScript, else the first found. */
function preferTypeScript(registrations: readonly ToolRegistration[]): ToolRegistration[] {
  const chosen = new Map<string, ToolRegistration>();
  for (const registration of registrations) {
    const current = chosen.get(registration.name);
    if (current === undefined || (!current.typescript && registration.typescript)) chosen.set(registration.name, registration);
  }
  return [...chosen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The value of a literal expression (strings, numbers, booleans, null, arrays, objects, regular
 * expressions as their source), resolving identifiers to constants; undefined when not static.
 */
export function staticValue(node: ts.Node | undefined, declarations: ReadonlyMap<string, ts.Node>, depth = 0): unknown {
  if (depth > 20) return undefined;
  const resolved = resolveNode(node, declarations);
  if (resolved === undefined) return undefined;
  if (isStringLike(resolved)) return resolved.text;
  if (compiler.isNumericLiteral(resolved)) return Number(resolved.text.replace(/_/g, ''));
  if (resolved.kind === compiler.SyntaxKind.TrueKeyword) return true;
  if (resolved.kind === compiler.SyntaxKind.FalseKeyword) return false;
  if (resolved.kind === compiler.SyntaxKind.NullKeyword) return null;
  if (compiler.isPrefixUnaryExpression(resolved) && resolved.operator === compiler.SyntaxKind.MinusToken) {
    const inner = staticValue(resolved.operand, declarations, depth + 1);
    return typeof inner === 'number' ? -inner : undefined;
  }
  if (compiler.isRegularExpressionLiteral(resolved)) return resolved.text.slice(1, resolved.text.lastIndexOf('/'));
  if (compiler.isArrayLiteralExpression(resolved)) {
    const values = resolved.elements.map((element) => staticValue(element, declarations, depth + 1));
    return values.some((value) => value === undefined) ? undefined : values;
  }
  if (compiler.isObjectLiteralExpression(resolved)) {
    const object: JsonObject = {};
    for (const property of resolved.properties) {
      if (!compiler.isPropertyAssignment(property) || !(compiler.isIdentifier(property.name) || compiler.isStringLiteral(property.name))) return undefined;
      const value = staticValue(property.initializer, declarations, depth + 1);
      if (value === undefined) return undefined;
      object[property.name.text] = value;
    }
    return object;
  }
  return undefined;
}
