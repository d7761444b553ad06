/**
 * @module openapi/schema
 * OpenAPI Schema Objects as the JSON Schema an MCP tool declares. OpenAPI 3.1 schemas are
 * JSON Schema 2020-12 already; OpenAPI 3.0 uses an extended subset whose differences matter
 * to a validator: `nullable: true` (becomes a `"null"` type), `example` (becomes `examples`),
 * boolean `exclusiveMinimum`/`exclusiveMaximum` (become numbers), and annotation-only members
 * (`discriminator`, `xml`, `externalDocs`) that are dropped. References must be inlined first
 * (refs.ts `inlineRefs`).
 */

type Json = Record<string, unknown>;

const DROPPED = new Set(['discriminator', 'xml', 'externalDocs']);
/** Members whose value is a map of schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Members whose value is one schema. */
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems']);
/** Members whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function withNull(schema: Json): Json {
  const type = schema['type'];
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  if (Array.isArray(type)) return type.includes('null') ? schema : { ...schema, type: [...type, 'null'] };
  // No type: `nullable` alone adds nothing a validator could check.
  return schema;
}

function boundFlags(out: Json, schema: Json): void {
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof schema[flag] !== 'boolean') continue;
    delete out[flag];
    if (schema[flag] === true && typeof schema[bound] === 'number') {
      out[flag] = schema[bound];
      delete out[bound];
    }
  }
}

/** Converts one (reference-free) OpenAPI schema to JSON Schema; `version` is the document's `openapi` value. */
export function toJsonSchema(schema: unknown, version: string): unknown {
  if (typeof schema === 'boolean') return schema;
  if (!isObject(schema)) return {};
  const legacy = version.startsWith('3.0');
  let out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key) || (legacy && key === 'nullable')) continue;
    if (key === 'example') {
      if (!Array.isArray(schema['examples'])) out['examples'] = [value];
    } else if (SCHEMA_MAPS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, toJsonSchema(child, version)]));
    } else if (SCHEMA_VALUES.has(key) && (isObject(value) || typeof value === 'boolean')) {
      out[key] = toJsonSchema(value, version);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((child) => toJsonSchema(child, version));
    } else {
      out[key] = value;
    }
  }
  if (legacy) {
    boundFlags(out, schema);
    if (schema['nullable'] === true) out = withNull(out);
  }
  return out;
}

/** True when a JSON Schema describes objects only (so it can be an MCP output schema as is). */
export function isObjectSchema(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  const type = schema['type'];
  return type === 'object' || (type === undefined && isObject(schema['properties']) && schema['anyOf'] === undefined && schema['oneOf'] === undefined);
}
