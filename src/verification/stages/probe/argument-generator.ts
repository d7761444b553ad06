/**
 * @module verification/stages/probe/argument-generator
 * Arguments for a tool, generated from its input JSON Schema (issue #10), so the probe can call
 * tools it has never seen. Small on purpose: required properties only (fewer ways to trip an
 * optional feature), and for each value the first of `const`, `default`, `examples[0]`,
 * `enum[0]`, then a value of the type that honours `format`, `minimum`/`maximum`,
 * `minLength`/`maxLength`, `minItems` and local `$ref`s. `anyOf`/`oneOf` take the first
 * non-null branch, `allOf` merges its object parts. The bad-argument variants feed the
 * compatibility stage's "clean error on bad arguments" check.
 */

type Json = Record<string, unknown>;

const MAX_DEPTH = 8;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function resolveRef(root: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    if (!isObject(node)) return undefined;
    node = node[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return isObject(node) ? node : undefined;
}

function firstType(schema: Json): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((candidate): candidate is string => typeof candidate === 'string' && candidate !== 'null');
  if (isObject(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'probe@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': '/probe',
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  duration: 'PT1S',
};

function sampleString(schema: Json): string {
  const format = typeof schema.format === 'string' ? FORMAT_SAMPLES[schema.format] : undefined;
  let text = format ?? 'probe';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  if (text.length < min) text = text.padEnd(min, 'x');
  if (text.length > max) text = text.slice(0, Math.max(0, max));
  return text;
}

function sampleNumber(schema: Json, integer: boolean): number {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : undefined;
  let value = minimum ?? (maximum !== undefined ? Math.min(1, maximum) : 1);
  if (integer) value = Math.ceil(value);
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return value;
}

/** A value valid for `schema` as far as this generator understands it. */
export function sampleValue(schema: unknown, root: Json, depth = 0): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return 'probe';
  if (typeof schema.$ref === 'string') return sampleValue(resolveRef(root, schema.$ref), root, depth + 1);
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      const branch = branches.find((candidate) => !(isObject(candidate) && candidate.type === 'null')) ?? branches[0];
      return sampleValue(branch, root, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Json = { type: 'object', properties: {}, required: [] };
    for (const part of schema.allOf) {
      const node = isObject(part) && typeof part.$ref === 'string' ? resolveRef(root, part.$ref) : part;
      if (!isObject(node)) continue;
      Object.assign(merged.properties as Json, node.properties ?? {});
      (merged.required as unknown[]).push(...(Array.isArray(node.required) ? node.required : []));
    }
    return sampleValue(merged, root, depth + 1);
  }
  switch (firstType(schema)) {
    case 'string':
      return sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const count = typeof schema.minItems === 'number' ? Math.min(schema.minItems, 5) : 0;
      return Array.from({ length: count }, () => sampleValue(schema.items, root, depth + 1));
    }
    case 'object':
      return sampleObject(schema, root, depth);
    default:
      return 'probe';
  }
}

function sampleObject(schema: Json, root: Json, depth: number): Json {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const out: Json = {};
  for (const name of required) out[name] = sampleValue(properties[name] ?? {}, root, depth + 1);
  return out;
}

/** Arguments for a call of a tool with this input schema (an object, possibly empty). */
export function generateArguments(inputSchema: Record<string, unknown>): Record<string, unknown> {
  const value = sampleValue(inputSchema, inputSchema);
  return isObject(value) ? value : {};
}

/** The required property names of an input schema (top level). */
export function requiredProperties(inputSchema: Record<string, unknown>): string[] {
  return Array.isArray(inputSchema.required) ? inputSchema.required.filter((name): name is string => typeof name === 'string') : [];
}

/**
 * A bad-argument variant for the compatibility check: `missing-required` drops every required
 * property; `wrong-type` sends each required property a value of the wrong JSON type (an
 * object where a string is wanted, a string elsewhere). Undefined when the schema requires
 * nothing (no wrong call can be built without guessing).
 */
export function badArguments(inputSchema: Record<string, unknown>, kind: 'missing-required' | 'wrong-type'): Record<string, unknown> | undefined {
  const required = requiredProperties(inputSchema);
  if (required.length === 0) return undefined;
  if (kind === 'missing-required') return {};
  const properties = isObject(inputSchema.properties) ? inputSchema.properties : {};
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const property = properties[name];
    const type = isObject(property) ? firstType(property) : undefined;
    out[name] = type === 'string' ? { unexpected: true } : 'not-the-declared-type';
  }
  return out;
}

/** Edge values by what a string property seems to hold (its name or format). */
const EDGE_STRINGS = {
  path: '../../../../../../etc/passwd',
  url: 'http://127.0.0.1:5432/',
  long: 'A'.repeat(10_000),
} as const;

function edgeValue(name: string, schema: unknown, root: Json, depth: number): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return EDGE_STRINGS.long;
  if (typeof schema.$ref === 'string') return edgeValue(name, resolveRef(root, schema.$ref), root, depth + 1);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[schema.enum.length - 1];
  switch (firstType(schema)) {
    case 'string': {
      const format = typeof schema.format === 'string' ? schema.format : '';
      if (/^(uri|url|iri)/.test(format) || /(url|uri|href|endpoint|host|link|webhook)/i.test(name)) return EDGE_STRINGS.url;
      if (/(path|file|dir|folder|root|cwd)/i.test(name)) return EDGE_STRINGS.path;
      return EDGE_STRINGS.long;
    }
    case 'integer':
    case 'number':
      return typeof schema.maximum === 'number' ? schema.maximum : typeof schema.minimum === 'number' ? schema.minimum : -1;
    case 'boolean':
      return true;
    case 'array':
      return [edgeValue(name, schema.items, root, depth + 1)];
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, edgeValue(key, child, root, depth + 1)]));
    }
    default:
      return EDGE_STRINGS.long;
  }
}

/**
 * Edge arguments for a tool (issue #23): every top-level property, required or not, filled
 * with an edge value — a path climbing out of the plugin's folder for path-like names, a
 * loopback database URL for URL-like ones, a 10,000-character string otherwise, the extreme of
 * a number's range, the last enum value. Undefined when the tool takes no properties.
 */
export function edgeArguments(inputSchema: Record<string, unknown>): Record<string, unknown> | undefined {
  const properties = isObject(inputSchema.properties) ? inputSchema.properties : {};
  if (Object.keys(properties).length === 0) return undefined;
  return edgeValue('', { ...inputSchema, type: 'object' }, inputSchema, 0) as Record<string, unknown>;
}
