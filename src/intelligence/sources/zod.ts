/**
 * @module intelligence/sources/zod
 * The zod source (issue #14, seed 000 §3.3 "Zod Schema Inference"): the input shapes of tool
 * registrations (code-scan.ts) turned into JSON Schema by reading the zod calls in the syntax
 * tree — base types, `.min/.max/.length/.int/.positive/.regex/.email/.url/.uuid`, enums,
 * literals, arrays, objects, unions, `.optional()`, `.default(v)` and `.describe(text)` — plus
 * the registration's description, title and annotations. Static only: a construct it cannot
 * read (a computed value, a helper returning a schema) is left out with a warning.
 */
import type ts from 'typescript';
import { lazyRequire } from '../../core/lazy-require.ts';
import { sideEffectsFromAnnotations, retrySafeFromAnnotations } from './mcp.ts';
import { member, resolveNode, staticValue, type CodeScan, type ToolRegistration } from './code-scan.ts';
import type { JsonObject, SourceResult } from '../types.ts';

// The compiler loads on the first parse, not when this module is imported (issue #28).
const compiler = lazyRequire<typeof ts>('typescript');

interface Converted {
  schema: JsonObject;
  optional: boolean;
}

type Declarations = ReadonlyMap<string, ts.Node>;

/** `[receiver, method, arguments]` of each call in a chain, innermost first, and the chain's root. */
function unwrapChain(expression: ts.Expression): { root: ts.Expression; calls: Array<{ method: string; args: readonly ts.Expression[] }> } {
  const calls: Array<{ method: string; args: readonly ts.Expression[] }> = [];
  let current: ts.Expression = expression;
  while (compiler.isCallExpression(current) && compiler.isPropertyAccessExpression(current.expression)) {
    calls.unshift({ method: current.expression.name.text, args: current.arguments });
    current = current.expression.expression;
  }
  return { root: current, calls };
}

const isZodRoot = (node: ts.Expression): boolean =>
  (compiler.isIdentifier(node) && node.text === 'z') ||
  (compiler.isPropertyAccessExpression(node) && compiler.isIdentifier(node.expression) && node.expression.text === 'z' && node.name.text === 'coerce');

const FORMATS: Record<string, string> = { email: 'email', url: 'uri', uuid: 'uuid', datetime: 'date-time', date: 'date', ipv4: 'ipv4', ipv6: 'ipv6' };

/** The schema of a zod base call (`z.string()`, `z.enum([...])`, `z.array(x)`, …). */
function baseSchema(method: string, args: readonly ts.Expression[], declarations: Declarations, warnings: string[]): JsonObject | undefined {
  switch (method) {
    case 'string': return { type: 'string' };
    case 'number': return { type: 'number' };
    case 'bigint': return { type: 'integer' };
    case 'boolean': return { type: 'boolean' };
    case 'date': return { type: 'string', format: 'date-time' };
    case 'null': return { type: 'null' };
    case 'any': case 'unknown': return {};
    case 'literal': {
      const value = staticValue(args[0], declarations);
      return value === undefined ? {} : { const: value };
    }
    case 'enum': {
      const values = staticValue(args[0], declarations);
      return Array.isArray(values) ? { type: 'string', enum: values } : { type: 'string' };
    }
    case 'array': return { type: 'array', ...(args[0] === undefined ? {} : { items: zodToSchema(args[0], declarations, warnings)?.schema ?? {} }) };
    case 'object': return objectSchema(args[0], declarations, warnings);
    case 'record': {
      const value = args[args.length - 1];
      return { type: 'object', ...(value === undefined ? {} : { additionalProperties: zodToSchema(value, declarations, warnings)?.schema ?? {} }) };
    }
    case 'union': {
      const options = resolveNode(args[0], declarations);
      if (options === undefined || !compiler.isArrayLiteralExpression(options)) return {};
      return { anyOf: options.elements.map((option) => zodToSchema(option, declarations, warnings)?.schema ?? {}) };
    }
    case 'optional': case 'nullable': return args[0] === undefined ? {} : (zodToSchema(args[0], declarations, warnings)?.schema ?? {});
    default: return undefined;
  }
}

/** Applies one modifier (`.min(2)`, `.describe('…')`, …) to a schema. */
function applyModifier(converted: Converted, method: string, args: readonly ts.Expression[], declarations: Declarations): void {
  const { schema } = converted;
  const value = staticValue(args[0], declarations);
  const kind = schema['type'];
  const bound = (stringKey: string, arrayKey: string, numberKey: string) =>
    kind === 'string' ? stringKey : kind === 'array' ? arrayKey : numberKey;
  switch (method) {
    case 'min': case 'gte': if (typeof value === 'number') schema[bound('minLength', 'minItems', 'minimum')] = value; break;
    case 'max': case 'lte': if (typeof value === 'number') schema[bound('maxLength', 'maxItems', 'maximum')] = value; break;
    case 'gt': if (typeof value === 'number') schema['exclusiveMinimum'] = value; break;
    case 'lt': if (typeof value === 'number') schema['exclusiveMaximum'] = value; break;
    case 'length': if (typeof value === 'number') { schema[bound('minLength', 'minItems', 'minimum')] = value; schema[bound('maxLength', 'maxItems', 'maximum')] = value; } break;
    case 'nonempty': schema[kind === 'array' ? 'minItems' : 'minLength'] = 1; break;
    case 'int': schema['type'] = 'integer'; break;
    case 'positive': schema['exclusiveMinimum'] = 0; break;
    case 'nonnegative': schema['minimum'] = 0; break;
    case 'negative': schema['exclusiveMaximum'] = 0; break;
    case 'nonpositive': schema['maximum'] = 0; break;
    case 'multipleOf': case 'step': if (typeof value === 'number') schema['multipleOf'] = value; break;
    case 'regex': if (typeof value === 'string') schema['pattern'] = value; break;
    case 'optional': case 'nullish': converted.optional = true; break;
    case 'default': converted.optional = true; if (value !== undefined) schema['default'] = value; break;
    case 'describe': if (typeof value === 'string') schema['description'] = value; break;
    default: if (FORMATS[method] !== undefined) schema['format'] = FORMATS[method];
  }
}

/** JSON Schema of a zod expression; undefined when it is not a zod chain this reader understands. */
export function zodToSchema(expression: ts.Expression, declarations: Declarations, warnings: string[]): Converted | undefined {
  const resolved = resolveNode(expression, declarations);
  if (resolved === undefined || !compiler.isExpression(resolved)) return undefined;
  const { root, calls } = unwrapChain(resolved);
  const [base, ...modifiers] = calls;
  if (base === undefined || !isZodRoot(root)) return undefined;
  const schema = baseSchema(base.method, base.args, declarations, warnings);
  if (schema === undefined) {
    warnings.push(`z.${base.method}() is not read statically; the field is described without its constraints`);
    return { schema: {}, optional: false };
  }
  const converted: Converted = { schema: { ...schema }, optional: base.method === 'optional' };
  for (const modifier of modifiers) applyModifier(converted, modifier.method, modifier.args, declarations);
  return converted;
}

/** An object schema from a zod shape (object literal of zod fields) or a `z.object(...)` call. */
function objectSchema(shape: ts.Expression | undefined, declarations: Declarations, warnings: string[]): JsonObject {
  const resolved = resolveNode(shape, declarations);
  if (resolved === undefined || !compiler.isObjectLiteralExpression(resolved)) return { type: 'object' };
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const property of resolved.properties) {
    if (!compiler.isPropertyAssignment(property) && !compiler.isShorthandPropertyAssignment(property)) continue;
    if (!(compiler.isIdentifier(property.name) || compiler.isStringLiteral(property.name))) continue;
    const key = property.name.text;
    const value = compiler.isPropertyAssignment(property) ? property.initializer : property.name;
    const converted = zodToSchema(value, declarations, warnings);
    if (converted === undefined) {
      warnings.push(`field '${key}' is not a zod schema read statically`);
      properties[key] = {};
      continue;
    }
    properties[key] = converted.schema;
    if (!converted.optional) required.push(key);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** The input schema of a registration: a raw shape, or a `z.object(...)` expression. */
function inputSchemaOf(registration: ToolRegistration, declarations: Declarations, warnings: string[]): JsonObject | undefined {
  if (registration.shape === undefined) return undefined;
  const resolved = resolveNode(registration.shape, declarations);
  if (resolved !== undefined && compiler.isObjectLiteralExpression(resolved)) return objectSchema(resolved, declarations, warnings);
  return resolved !== undefined && compiler.isExpression(resolved) ? zodToSchema(resolved, declarations, warnings)?.schema : undefined;
}

/** The tool definition the registration states: description, title, input/output schema, annotation-derived fields. */
function definitionOf(registration: ToolRegistration, declarations: Declarations, warnings: string[]): JsonObject {
  const definition: JsonObject = { name: registration.name };
  const description = staticValue(registration.description, declarations);
  if (typeof description === 'string' && description.trim() !== '') definition['description'] = description;
  const title = staticValue(member(registration.config, 'title'), declarations);
  if (typeof title === 'string') definition['title'] = title;
  const local: string[] = [];
  const inputSchema = inputSchemaOf(registration, declarations, local);
  if (inputSchema !== undefined) definition['inputSchema'] = inputSchema;
  const output = member(registration.config, 'outputSchema');
  if (output !== undefined) {
    const resolved = resolveNode(output, declarations);
    const schema = resolved !== undefined && compiler.isObjectLiteralExpression(resolved) ? objectSchema(resolved, declarations, local) : undefined;
    if (schema !== undefined) definition['outputSchema'] = schema;
  }
  const annotations = staticValue(registration.annotations, declarations);
  if (annotations !== null && typeof annotations === 'object' && !Array.isArray(annotations)) {
    definition['sideEffects'] = sideEffectsFromAnnotations(annotations as JsonObject);
    const retrySafe = retrySafeFromAnnotations(annotations as JsonObject);
    if (retrySafe !== undefined) definition['retrySafe'] = retrySafe;
  }
  for (const warning of local) warnings.push(`${registration.location} tool '${registration.name}': ${warning}`);
  return definition;
}

/** The zod source: one definition per registered tool found in the code. */
export function zodSource(scan: CodeScan, inputHash: string, readWarnings: readonly string[] = []): SourceResult {
  const warnings = [...readWarnings];
  const tools: Record<string, JsonObject> = {};
  for (const registration of scan.registrations) tools[registration.name] = definitionOf(registration, scan.declarations, warnings);
  if (scan.registrations.length === 0) warnings.push('no registerTool / tool registrations were found in the source');
  return { source: 'zod', inputHash, partial: { tools }, warnings };
}
