import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTools, providerToolName, toGeminiSchema, toObjectSchema, type FormattableTool } from './provider-formats.ts';

const tool: FormattableTool = {
  qualifiedName: 'github__create_issue',
  description: 'Create an issue',
  parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
};

describe('provider names', () => {
  it('keeps a valid qualified name', () => {
    for (const provider of ['openai', 'anthropic', 'gemini', 'mcp'] as const) {
      assert.equal(providerToolName('github__create_issue', provider), 'github__create_issue');
    }
  });
  it('maps invalid or long names deterministically, distinctly and within limits', () => {
    const dotted = providerToolName('files__read.text', 'openai');
    assert.match(dotted, /^files__read_text_[0-9a-f]{8}$/);
    assert.equal(providerToolName('files__read.text', 'openai'), dotted, 'deterministic');
    assert.notEqual(providerToolName('files__read_text', 'openai'), dotted, 'no collision with the sanitised twin');
    assert.equal(providerToolName('files__read.text', 'mcp'), 'files__read.text', 'MCP allows dots');
    assert.equal(providerToolName('files__read.text', 'gemini'), 'files__read.text', 'Gemini allows dots');
    const long = `${'a'.repeat(60)}__${'b'.repeat(60)}`;
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      const name = providerToolName(long, provider);
      assert.ok(name.length <= 64, `${provider}: ${name.length}`);
      assert.match(name, /^[a-zA-Z0-9_-]+$/);
    }
    assert.notEqual(providerToolName(`${long}x`, 'openai'), providerToolName(`${long}y`, 'openai'));
    assert.match(providerToolName('9lives__go', 'gemini'), /^_9lives__go_[0-9a-f]{8}$/, 'Gemini names start with a letter or _');
  });
});

describe('provider formats', () => {
  it('formats OpenAI tools', () => {
    const { schemas, names } = formatTools([tool], 'openai');
    assert.deepEqual(schemas, [
      { type: 'function', function: { name: 'github__create_issue', description: 'Create an issue', parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } } },
    ]);
    assert.deepEqual(names, { github__create_issue: 'github__create_issue' });
  });
  it('formats Anthropic and MCP tools', () => {
    const anthropic = formatTools([tool], 'anthropic').schemas[0] as Record<string, unknown>;
    assert.deepEqual(Object.keys(anthropic), ['name', 'description', 'input_schema']);
    assert.equal((anthropic.input_schema as Record<string, unknown>).$schema, undefined);
    const mcp = formatTools([tool], 'mcp').schemas[0] as Record<string, unknown>;
    assert.deepEqual(Object.keys(mcp), ['name', 'description', 'inputSchema']);
  });
  it('wraps Gemini declarations in one functionDeclarations entry and omits parameters for no-argument tools', () => {
    const noArgs: FormattableTool = { qualifiedName: 'util__ping', description: 'Ping', parameters: { type: 'object' } };
    const { schemas, names } = formatTools([tool, noArgs], 'gemini');
    assert.equal(schemas.length, 1);
    const declarations = (schemas[0] as { functionDeclarations: Array<Record<string, unknown>> }).functionDeclarations;
    assert.equal(declarations.length, 2);
    assert.deepEqual(declarations[1], { name: 'util__ping', description: 'Ping' });
    assert.deepEqual(Object.keys(names), ['github__create_issue', 'util__ping']);
    assert.deepEqual(formatTools([], 'gemini').schemas, []);
  });
  it('returns the map from shortened names back to qualified names', () => {
    const { names } = formatTools([{ ...tool, qualifiedName: 'files__read.text' }], 'openai');
    const [providerName] = Object.keys(names);
    assert.notEqual(providerName, 'files__read.text');
    assert.equal(names[providerName!], 'files__read.text');
  });
  it('ensures an object top level', () => {
    assert.deepEqual(toObjectSchema({}), { type: 'object', properties: {} });
    assert.deepEqual(toObjectSchema({ type: 'string' }), { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
  });
});

describe('Gemini schema reduction', () => {
  it('drops unsupported keywords and keeps the supported subset', () => {
    const { schema, notes } = toGeminiSchema({
      $schema: 'x',
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', title: 'Name', minLength: 1, default: 'x', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', minimum: 0, maximum: 9, format: 'int32', exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3, uniqueItems: true },
        mode: { type: 'string', enum: ['a', 'b'] },
        level: { enum: [1, 2, 3] },
        fixed: { const: 'only' },
      },
      required: ['name', 'ghost'],
    });
    assert.deepEqual(schema, {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Name Format: email.' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', format: 'int32', minimum: 0, maximum: 9 },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        mode: { type: 'string', enum: ['a', 'b'], format: 'enum' },
        level: { type: 'integer', description: 'Allowed values: 1, 2, 3.' },
        fixed: { type: 'string', enum: ['only'], format: 'enum' },
      },
      required: ['name'],
    });
    assert.ok(notes.some((note) => note.includes('additionalProperties')));
  });
  it('turns type lists and nullable unions into type + nullable', () => {
    const { schema } = toGeminiSchema({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], description: 'A' },
        b: { anyOf: [{ type: 'number' }, { type: 'null' }] },
        c: { type: ['string', 'integer'] },
        d: { oneOf: [{ type: 'string' }, { type: 'boolean' }] },
      },
    });
    const properties = (schema as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(properties.a, { type: 'string', description: 'A', nullable: true });
    assert.deepEqual(properties.b, { type: 'number', nullable: true });
    assert.deepEqual(properties.c, { anyOf: [{ type: 'string' }, { type: 'integer' }] });
    assert.deepEqual(properties.d, { anyOf: [{ type: 'string' }, { type: 'boolean' }] });
  });
  it('inlines local $refs, stops at recursion and merges allOf', () => {
    const { schema, notes } = toGeminiSchema({
      type: 'object',
      $defs: { Address: { type: 'object', properties: { city: { type: 'string' } } }, Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
      properties: {
        home: { $ref: '#/$defs/Address', description: 'Home' },
        list: { $ref: '#/$defs/Node' },
        remote: { $ref: 'https://example.com/x.json' },
        merged: { allOf: [{ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] }, { properties: { y: { type: 'number' } } }] },
      },
    });
    const properties = (schema as { properties: Record<string, Record<string, unknown>> }).properties;
    assert.deepEqual(properties.home, { type: 'object', properties: { city: { type: 'string' } }, description: 'Home' });
    assert.equal((properties.list!.properties as Record<string, Record<string, unknown>>).next!.type, 'string', 'recursion ends in a JSON string');
    assert.equal(properties.remote!.type, 'string');
    assert.deepEqual(properties.merged, { type: 'object', properties: { x: { type: 'string' }, y: { type: 'number' } }, required: ['x'] });
    assert.equal(JSON.stringify(schema).includes('$defs'), false);
    assert.ok(notes.some((note) => note.includes('recursive')));
  });
  it('sends free-form nested objects and untyped values as strings', () => {
    const { schema } = toGeminiSchema({ type: 'object', properties: { meta: { type: 'object', additionalProperties: true }, any: {} } });
    const properties = (schema as { properties: Record<string, Record<string, unknown>> }).properties;
    assert.equal(properties.meta!.type, 'string');
    assert.match(String(properties.meta!.description), /JSON object/);
    assert.deepEqual(properties.any, { type: 'string' });
  });
  it('never emits a keyword outside the Gemini subset (deep random-ish schema)', () => {
    const allowed = new Set(['type', 'format', 'description', 'nullable', 'enum', 'properties', 'required', 'items', 'minItems', 'maxItems', 'minimum', 'maximum', 'anyOf']);
    const { schema } = toGeminiSchema({
      type: 'object',
      properties: {
        x: { type: 'object', properties: { y: { type: 'array', items: { type: ['object', 'null'], properties: { z: { type: 'string', pattern: '^a', examples: ['a'] } }, patternProperties: { '^x': {} } } } } },
        w: { not: { type: 'string' }, type: 'string', contentEncoding: 'base64' },
      },
    });
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
        assert.ok(allowed.has(key), `unexpected keyword ${key}`);
        if (key === 'properties') Object.values(value as Record<string, unknown>).forEach(walk);
        else walk(value);
      }
    };
    walk(schema);
  });
});
