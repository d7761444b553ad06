import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { badArguments, generateArguments, sampleValue } from './argument-generator.ts';
import { createSchemaCompiler } from './json-schema.ts';

describe('probe argument generator', () => {
  const compile = createSchemaCompiler();

  it('fills required properties only, honouring const, default, examples, enum, formats and bounds', () => {
    const schema = {
      type: 'object',
      properties: {
        mode: { const: 'fast' },
        limit: { type: 'integer', default: 7 },
        city: { type: 'string', examples: ['Oslo'] },
        unit: { type: 'string', enum: ['c', 'f'] },
        mail: { type: 'string', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        count: { type: 'integer', minimum: 3, maximum: 9 },
        ratio: { type: 'number', exclusiveMinimum: 0, maximum: 0.5 },
        code: { type: 'string', minLength: 8 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        optional: { type: 'string' },
      },
      required: ['mode', 'limit', 'city', 'unit', 'mail', 'when', 'id', 'count', 'ratio', 'code', 'tags'],
    };
    const args = generateArguments(schema);
    assert.equal(args.mode, 'fast');
    assert.equal(args.limit, 7);
    assert.equal(args.city, 'Oslo');
    assert.equal(args.unit, 'c');
    assert.equal(args.count, 3);
    assert.deepEqual(args.tags, ['probe', 'probe']);
    assert.equal('optional' in args, false);
    const compiled = compile(schema);
    assert.ok(compiled.ok);
    assert.equal(compiled.validate(args), undefined);
  });

  it('follows local $refs, nullable unions, type lists and allOf', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } },
      properties: {
        at: { $ref: '#/$defs/point' },
        note: { anyOf: [{ type: 'null' }, { type: 'string', maxLength: 3 }] },
        flag: { type: ['null', 'boolean'] },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] }] },
      },
      required: ['at', 'note', 'flag', 'both'],
    };
    const args = generateArguments(schema);
    assert.deepEqual(args, { at: { x: 1, y: 1 }, note: 'pro', flag: false, both: { a: 'probe', b: 1 } });
    const compiled = compile({ ...schema, $schema: 'https://json-schema.org/draft/2020-12/schema' });
    assert.ok(compiled.ok);
    assert.equal(compiled.validate(args), undefined);
  });

  it('gives an empty object for a schema without arguments and a placeholder for unknown shapes', () => {
    assert.deepEqual(generateArguments({ type: 'object' }), {});
    assert.deepEqual(generateArguments({}), {});
    assert.equal(sampleValue(true, {}), 'probe');
  });

  it('builds bad arguments that the schema rejects, and none when nothing is required', () => {
    const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text', 'n'] };
    const compiled = compile(schema);
    assert.ok(compiled.ok);
    for (const kind of ['missing-required', 'wrong-type'] as const) {
      const args = badArguments(schema, kind);
      assert.ok(args);
      assert.notEqual(compiled.validate(args), undefined, kind);
    }
    assert.equal(badArguments({ type: 'object', properties: { a: { type: 'string' } } }, 'wrong-type'), undefined);
  });

  it('reports a schema that does not compile instead of throwing', () => {
    const compiled = compile({ type: 'object', properties: { a: { $ref: '#/nowhere' } } });
    assert.equal(compiled.ok, false);
  });
});
