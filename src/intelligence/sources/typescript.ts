/**
 * @module intelligence/sources/typescript
 * The TypeScript AST source (issue #14, seed 000 §3.3 "TypeScript AST Analysis"): the handler
 * of each tool registration, read through the TypeScript compiler API — its JSDoc (summary,
 * `@param`, `@returns`, `@example`, `@throws`) and its signature. The summary becomes the tool
 * description, `@param` texts describe input properties (`@param args.query` or `@param query`),
 * `@returns` and `@throws` become `llmNotes`, an `@example` that is a JSON object becomes an
 * example input. Handlers declared elsewhere are found by name (code-scan.ts).
 */
import type ts from 'typescript';
import { lazyRequire } from '../../core/lazy-require.ts';
import { resolveNode, type CodeScan, type ToolRegistration } from './code-scan.ts';
import type { JsonObject, SourceResult } from '../types.ts';

// The compiler loads on the first parse, not when this module is imported (issue #28).
const compiler = lazyRequire<typeof ts>('typescript');

/** What a handler's JSDoc says. */
export interface HandlerDoc {
  summary: string | undefined;
  params: Map<string, string>;
  returns: string | undefined;
  throws: string[];
  examples: string[];
  signature: string | undefined;
}

const clean = (text: string | undefined): string => (text ?? '').replace(/^[\s-]+/, '').replace(/\s+/g, ' ').trim();

/** The handler's signature as written: `name(params): returnType`. */
function signatureOf(node: ts.Node): string | undefined {
  if (!compiler.isFunctionDeclaration(node) && !compiler.isArrowFunction(node) && !compiler.isFunctionExpression(node)) return undefined;
  const file = node.getSourceFile();
  const name = compiler.isFunctionDeclaration(node) && node.name !== undefined ? node.name.text : compiler.isVariableDeclaration(node.parent) && compiler.isIdentifier(node.parent.name) ? node.parent.name.text : 'handler';
  const params = node.parameters.map((parameter) => parameter.getText(file).replace(/\s+/g, ' ')).join(', ');
  const returns = node.type === undefined ? '' : `: ${node.type.getText(file).replace(/\s+/g, ' ')}`;
  return `${name}(${params})${returns}`.slice(0, 500);
}

/** Reads the JSDoc of a handler node (the compiler finds a `const f = () => …`'s on its statement). */
export function handlerDoc(node: ts.Node): HandlerDoc {
  const doc: HandlerDoc = { summary: undefined, params: new Map(), returns: undefined, throws: [], examples: [], signature: signatureOf(node) };
  for (const entry of compiler.getJSDocCommentsAndTags(node)) {
    if (compiler.isJSDoc(entry)) {
      const summary = clean(compiler.getTextOfJSDocComment(entry.comment));
      if (summary !== '') doc.summary = summary;
    }
  }
  for (const tag of compiler.getJSDocTags(node)) {
    const text = clean(compiler.getTextOfJSDocComment(tag.comment));
    if (compiler.isJSDocParameterTag(tag)) {
      const name = tag.name.getText().replace(/^\w+\./, '');
      if (text !== '') doc.params.set(name, text);
    } else if (compiler.isJSDocReturnTag(tag) || tag.tagName.text === 'returns') {
      if (text !== '') doc.returns = text;
    } else if (tag.tagName.text === 'throws' || tag.tagName.text === 'exception') {
      if (text !== '') doc.throws.push(text);
    } else if (tag.tagName.text === 'example') {
      const raw = (compiler.getTextOfJSDocComment(tag.comment) ?? '').trim();
      if (raw !== '') doc.examples.push(raw);
    }
  }
  return doc;
}

/** An `@example` as a PID example: a JSON object is the input; other text is a described example. */
function exampleOf(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { input: value as JsonObject };
  } catch {
    // Not JSON: kept as a description of how the tool is called.
  }
  return { input: {}, description: text.slice(0, 2_000) };
}

/** The definition fields a handler's documentation gives. */
function definitionOf(registration: ToolRegistration, scan: CodeScan): JsonObject | undefined {
  const handler = resolveNode(registration.handler, scan.declarations);
  if (handler === undefined || !(compiler.isFunctionDeclaration(handler) || compiler.isArrowFunction(handler) || compiler.isFunctionExpression(handler))) return undefined;
  const doc = handlerDoc(handler);
  const definition: JsonObject = { name: registration.name };
  if (doc.summary !== undefined) definition['description'] = doc.summary;
  const lower = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);
  const notes = [doc.returns === undefined ? '' : `Returns ${lower(doc.returns.replace(/^returns?\s+/i, ''))}`, ...doc.throws.map((text) => `Fails ${/^(when|if)\b/i.test(text) ? lower(text) : `with: ${text}`}`)]
    .filter((text) => text !== '')
    .map((text) => (/[.!?]$/.test(text) ? text : `${text}.`));
  if (notes.length > 0) definition['llmNotes'] = notes.join(' ');
  if (doc.params.size > 0) {
    const properties: JsonObject = {};
    for (const [name, text] of doc.params) properties[name] = { description: text };
    definition['inputSchema'] = { type: 'object', properties };
  }
  if (doc.examples.length > 0) definition['examples'] = doc.examples.map(exampleOf).filter((example): example is JsonObject => example !== undefined);
  if (doc.signature !== undefined) definition['signature'] = doc.signature;
  return Object.keys(definition).length > 1 ? definition : undefined;
}

/** The TypeScript source: what each registered tool's handler documentation says. */
export function typescriptSource(scan: CodeScan, inputHash: string): SourceResult {
  const tools: Record<string, JsonObject> = {};
  for (const registration of scan.registrations) {
    const definition = definitionOf(registration, scan);
    if (definition !== undefined) tools[registration.name] = definition;
  }
  const warnings = scan.registrations.length > 0 && Object.keys(tools).length === 0 ? ['no tool handler carries JSDoc or a readable signature'] : [];
  return { source: 'ts', inputHash, partial: { tools }, warnings };
}
