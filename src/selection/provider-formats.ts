/**
 * @module selection/provider-formats
 * Tool schemas in the shape each LLM provider takes (DESIGN §3.4), as pure functions.
 *
 * | provider    | one tool                                              | name rule                                  |
 * |-------------|-------------------------------------------------------|--------------------------------------------|
 * | `openai`    | `{type: 'function', function: {name, description, parameters}}` | `^[a-zA-Z0-9_-]{1,64}$`          |
 * | `anthropic` | `{name, description, input_schema}`                   | `^[a-zA-Z0-9_-]{1,64}$`                    |
 * | `gemini`    | `{name, description, parameters}` inside one `{functionDeclarations: [...]}` | `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$` |
 * | `mcp`       | `{name, description, inputSchema}`                    | `^[a-zA-Z0-9_.-]{1,128}$`                  |
 *
 * Names: the qualified name (`plugin__tool`) is used as-is when the provider accepts it.
 * Otherwise the name is made safe deterministically: characters outside the provider's set
 * become `_`, the text is cut to leave room, and `_` + the first 8 hex digits of the
 * SHA-256 of the qualified name are appended, so two different tools never map to the
 * same name and the mapping is reproducible from the qualified name alone. `formatTools`
 * returns the `providerName → qualifiedName` map so a caller can route a call back.
 *
 * Gemini takes a subset of OpenAPI 3.0 (`toGeminiSchema`, rules in docs/selection.md).
 */
import { sha256Hex } from '../core/hash.ts';

/** The providers Quiver formats tools for. */
export const PROVIDERS = ['openai', 'anthropic', 'gemini', 'mcp'] as const;
/** A provider name. */
export type SelectionProvider = (typeof PROVIDERS)[number];

/** What formatting needs from a tool. */
export interface FormattableTool {
  qualifiedName: string;
  description: string;
  parameters: Record<string, unknown>;
}

interface NameRule {
  valid: RegExp;
  invalidChar: RegExp;
  maxLength: number;
  /** True when the first character must be a letter or underscore. */
  letterFirst: boolean;
}

const NAME_RULES: Record<SelectionProvider, NameRule> = {
  openai: { valid: /^[a-zA-Z0-9_-]{1,64}$/, invalidChar: /[^a-zA-Z0-9_-]/g, maxLength: 64, letterFirst: false },
  anthropic: { valid: /^[a-zA-Z0-9_-]{1,64}$/, invalidChar: /[^a-zA-Z0-9_-]/g, maxLength: 64, letterFirst: false },
  gemini: { valid: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/, invalidChar: /[^a-zA-Z0-9_.:-]/g, maxLength: 64, letterFirst: true },
  mcp: { valid: /^[a-zA-Z0-9_.-]{1,128}$/, invalidChar: /[^a-zA-Z0-9_.-]/g, maxLength: 128, letterFirst: false },
};

/** The name `provider` will see for a tool with this qualified name (see the module comment). */
export function providerToolName(qualifiedName: string, provider: SelectionProvider): string {
  const rule = NAME_RULES[provider];
  if (rule.valid.test(qualifiedName)) return qualifiedName;
  const suffix = `_${sha256Hex(qualifiedName).slice(0, 8)}`;
  let base = qualifiedName.replace(rule.invalidChar, '_');
  if (rule.letterFirst && !/^[a-zA-Z_]/.test(base)) base = `_${base}`;
  return `${base.slice(0, rule.maxLength - suffix.length)}${suffix}`;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An object schema for OpenAI / Anthropic / MCP: `type: 'object'` ensured, `$schema` dropped (it costs tokens, says nothing). */
export function toObjectSchema(parameters: JsonObject): JsonObject {
  const { $schema: _ignored, ...rest } = parameters;
  if (rest.type === 'object') return rest;
  if (rest.type === undefined) return { type: 'object', ...rest, ...(rest.properties === undefined ? { properties: {} } : {}) };
  // A non-object top level (rare, but MCP servers exist that do it): wrap it as one argument.
  return { type: 'object', properties: { input: rest }, required: ['input'] };
}

const GEMINI_STRING_FORMATS = new Set(['enum', 'date-time']);
const GEMINI_NUMBER_FORMATS = new Set(['float', 'double']);
const GEMINI_INTEGER_FORMATS = new Set(['int32', 'int64']);
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
const MAX_GEMINI_DEPTH = 12;

/** The result of reducing a JSON Schema to Gemini's subset, with what was lost. */
export interface GeminiSchemaResult {
  schema: JsonObject | undefined;
  /** Human-readable notes of every lossy step (dropped keywords, collapsed unions…). */
  notes: string[];
}

function resolveLocalRef(root: JsonObject, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function inferType(schema: JsonObject): string | undefined {
  if (isObject(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  if (Array.isArray(schema.enum)) {
    const values = schema.enum;
    if (values.every((v) => typeof v === 'string')) return 'string';
    if (values.every((v) => typeof v === 'number' && Number.isInteger(v))) return 'integer';
    if (values.every((v) => typeof v === 'number')) return 'number';
    if (values.every((v) => typeof v === 'boolean')) return 'boolean';
  }
  if (schema.const !== undefined) return typeof schema.const === 'string' ? 'string' : typeof schema.const === 'number' ? 'number' : typeof schema.const === 'boolean' ? 'boolean' : undefined;
  if (typeof schema.minLength === 'number' || typeof schema.maxLength === 'number' || typeof schema.pattern === 'string') return 'string';
  if (typeof schema.minimum === 'number' || typeof schema.maximum === 'number') return 'number';
  return undefined;
}

/** Merges an `allOf` of object schemas into one (properties and required united). */
function mergeAllOf(parts: unknown[], root: JsonObject, notes: string[], path: string, seen: ReadonlySet<string>): JsonObject {
  const merged: JsonObject = { type: 'object', properties: {} as JsonObject, required: [] as string[] };
  for (const part of parts) {
    let node = part;
    if (isObject(node) && typeof node.$ref === 'string') {
      if (seen.has(node.$ref)) continue;
      node = resolveLocalRef(root, node.$ref);
    }
    if (!isObject(node)) continue;
    if (isObject(node.properties)) Object.assign(merged.properties as JsonObject, node.properties);
    if (Array.isArray(node.required)) (merged.required as string[]).push(...node.required.filter((r): r is string => typeof r === 'string'));
    if (typeof node.description === 'string' && merged.description === undefined) merged.description = node.description;
  }
  notes.push(`${path}: allOf merged into one object`);
  return merged;
}

function reduce(node: unknown, root: JsonObject, notes: string[], path: string, depth: number, seen: ReadonlySet<string>): JsonObject | undefined {
  if (!isObject(node)) {
    // `true` / `{}`-like "anything" schemas: Gemini needs a type; a string is the safe carrier.
    notes.push(`${path}: unconstrained schema sent as string`);
    return { type: 'string' };
  }
  if (depth > MAX_GEMINI_DEPTH) {
    notes.push(`${path}: nested deeper than ${MAX_GEMINI_DEPTH}; sent as a JSON string`);
    return { type: 'string', description: 'JSON value (nesting too deep to describe)' };
  }
  let schema = node;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    const target = seen.has(ref) ? undefined : resolveLocalRef(root, ref);
    if (!isObject(target)) {
      notes.push(`${path}: $ref ${ref} ${seen.has(ref) ? 'is recursive' : 'cannot be resolved'}; sent as a JSON string`);
      return { type: 'string', description: typeof schema.description === 'string' ? schema.description : 'JSON value' };
    }
    const { $ref: _ref, ...siblings } = schema;
    notes.push(`${path}: $ref ${ref} inlined`);
    return reduce({ ...target, ...siblings }, root, notes, path, depth + 1, new Set([...seen, ref]));
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    schema = { ...mergeAllOf(allOf, root, notes, path, seen), ...rest };
  }
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) {
    const nonNull = union.filter((member) => !(isObject(member) && member.type === 'null'));
    const nullable = nonNull.length < union.length;
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    if (nonNull.length === 1) {
      const inner = reduce({ ...(nonNull[0] as JsonObject), ...rest }, root, notes, path, depth + 1, seen);
      if (inner && nullable) inner.nullable = true;
      notes.push(`${path}: single-member union collapsed`);
      return inner;
    }
    const members = nonNull.map((member, i) => reduce(member, root, notes, `${path}.anyOf[${i}]`, depth + 1, seen)).filter((m): m is JsonObject => m !== undefined);
    const out: JsonObject = { anyOf: members };
    if (typeof rest.description === 'string') out.description = rest.description;
    if (nullable) out.nullable = true;
    if (Array.isArray(schema.oneOf)) notes.push(`${path}: oneOf sent as anyOf`);
    return out;
  }

  const out: JsonObject = {};
  let type: string | undefined;
  let nullable = schema.nullable === true;
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t): t is string => typeof t === 'string');
    if (types.includes('null')) nullable = true;
    const nonNull = types.filter((t) => t !== 'null');
    if (nonNull.length > 1) {
      const members = nonNull.map((t, i) => reduce({ ...schema, type: t }, root, notes, `${path}.anyOf[${i}]`, depth + 1, seen)).filter((m): m is JsonObject => m !== undefined);
      notes.push(`${path}: type list sent as anyOf`);
      const union: JsonObject = { anyOf: members };
      if (typeof schema.description === 'string') union.description = schema.description;
      if (nullable) union.nullable = true;
      return union;
    }
    type = nonNull[0];
  } else if (typeof schema.type === 'string') {
    type = schema.type;
  }
  if (type === 'null') {
    notes.push(`${path}: type null sent as nullable string`);
    type = 'string';
    nullable = true;
  }
  if (type === undefined || !GEMINI_TYPES.has(type)) {
    const inferred = inferType(schema);
    if (inferred === undefined) notes.push(`${path}: no usable type; sent as string`);
    type = inferred ?? 'string';
  }

  const descriptionParts: string[] = [];
  if (typeof schema.description === 'string' && schema.description.length > 0) descriptionParts.push(schema.description);
  else if (typeof schema.title === 'string' && schema.title.length > 0) descriptionParts.push(schema.title);

  let enumValues: unknown[] | undefined = Array.isArray(schema.enum) ? schema.enum : schema.const !== undefined ? [schema.const] : undefined;
  if (schema.const !== undefined) notes.push(`${path}: const sent as a one-value enum`);

  out.type = type;
  if (type === 'object') {
    const properties: JsonObject = {};
    if (isObject(schema.properties)) {
      for (const [name, child] of Object.entries(schema.properties)) {
        const reduced = reduce(child, root, notes, `${path}.${name}`, depth + 1, seen);
        if (reduced) properties[name] = reduced;
      }
    }
    if (Object.keys(properties).length === 0) {
      // Gemini rejects OBJECT without properties ("should be non-empty for OBJECT type").
      if (depth === 0) return undefined;
      notes.push(`${path}: free-form object sent as a JSON string`);
      descriptionParts.push('A JSON object, encoded as a string.');
      out.type = 'string';
    } else {
      out.properties = properties;
      if (Array.isArray(schema.required)) {
        const required = schema.required.filter((r): r is string => typeof r === 'string' && r in properties);
        if (required.length > 0) out.required = required;
      }
    }
    if (schema.additionalProperties !== undefined || schema.patternProperties !== undefined) notes.push(`${path}: additionalProperties/patternProperties dropped`);
  } else if (type === 'array') {
    const items = Array.isArray(schema.items) ? schema.items[0] : schema.items;
    out.items = reduce(items ?? {}, root, notes, `${path}[]`, depth + 1, seen) ?? { type: 'string' };
    if (typeof schema.minItems === 'number') out.minItems = schema.minItems;
    if (typeof schema.maxItems === 'number') out.maxItems = schema.maxItems;
  } else if (type === 'string') {
    if (typeof schema.format === 'string') {
      if (GEMINI_STRING_FORMATS.has(schema.format)) out.format = schema.format;
      else descriptionParts.push(`Format: ${schema.format}.`);
    }
  } else if (type === 'number' || type === 'integer') {
    if (typeof schema.format === 'string' && (type === 'number' ? GEMINI_NUMBER_FORMATS : GEMINI_INTEGER_FORMATS).has(schema.format)) out.format = schema.format;
    if (typeof schema.minimum === 'number') out.minimum = schema.minimum;
    if (typeof schema.maximum === 'number') out.maximum = schema.maximum;
  }
  if (enumValues !== undefined) {
    if (out.type === 'string' && enumValues.every((v) => typeof v === 'string')) {
      out.enum = enumValues;
      out.format = 'enum';
    } else {
      // Gemini enums are strings; other values survive as text the model can read.
      descriptionParts.push(`Allowed values: ${enumValues.map((v) => JSON.stringify(v)).join(', ')}.`);
      notes.push(`${path}: non-string enum moved to the description`);
    }
    enumValues = undefined;
  }
  if (descriptionParts.length > 0) out.description = descriptionParts.join(' ');
  if (nullable) out.nullable = true;
  return out;
}

/**
 * Reduces a JSON Schema to the OpenAPI 3.0 subset Gemini's `FunctionDeclaration.parameters`
 * accepts. Returns `schema: undefined` for a tool without arguments (Gemini wants
 * `parameters` omitted then). See docs/selection.md for every rule.
 */
export function toGeminiSchema(parameters: JsonObject): GeminiSchemaResult {
  const notes: string[] = [];
  const schema = reduce(parameters, parameters, notes, '$', 0, new Set());
  return { schema, notes };
}

/** One tool in the provider's shape, with the name the provider sees. */
export interface FormattedTool {
  name: string;
  schema: JsonObject;
}

/** Formats one tool for `provider` (for Gemini: one function declaration). */
export function formatTool(tool: FormattableTool, provider: SelectionProvider): FormattedTool {
  const name = providerToolName(tool.qualifiedName, provider);
  switch (provider) {
    case 'openai':
      return { name, schema: { type: 'function', function: { name, description: tool.description, parameters: toObjectSchema(tool.parameters) } } };
    case 'anthropic':
      return { name, schema: { name, description: tool.description, input_schema: toObjectSchema(tool.parameters) } };
    case 'mcp':
      return { name, schema: { name, description: tool.description, inputSchema: toObjectSchema(tool.parameters) } };
    case 'gemini': {
      const { schema } = toGeminiSchema(tool.parameters);
      return { name, schema: schema === undefined ? { name, description: tool.description } : { name, description: tool.description, parameters: schema } };
    }
  }
}

/**
 * Wraps formatted tools into the array a provider request takes as `tools`: one entry per
 * tool, except Gemini, whose tools array holds one `{functionDeclarations: [...]}`.
 */
export function assembleProviderTools(formatted: readonly FormattedTool[], provider: SelectionProvider): unknown[] {
  if (provider === 'gemini') return formatted.length === 0 ? [] : [{ functionDeclarations: formatted.map((f) => f.schema) }];
  return formatted.map((f) => f.schema);
}

/** Formats tools for a provider: the provider-ready array and the `providerName → qualifiedName` map. */
export function formatTools(tools: readonly FormattableTool[], provider: SelectionProvider): { schemas: unknown[]; names: Record<string, string> } {
  const formatted = tools.map((tool) => formatTool(tool, provider));
  const names: Record<string, string> = {};
  formatted.forEach((f, i) => {
    names[f.name] = tools[i]!.qualifiedName;
  });
  return { schemas: assembleProviderTools(formatted, provider), names };
}
