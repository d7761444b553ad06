/**
 * @module verification/stages/probe/json-schema
 * A real JSON Schema validator (ajv, with formats) for the probe and the compatibility stage:
 * draft-07 by default (what most MCP servers declare), 2020-12 when the schema says so.
 * Schemas come from plugins, so compiling may fail: that is a result, not an exception.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown;
// ajv-formats is CommonJS with `exports.default`; NodeNext sees the module object.
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

/** A compiled schema, or why it did not compile. */
export type CompiledSchema = { ok: true; validate: (value: unknown) => string | undefined } | { ok: false; error: string };

function makeValidators(): { draft7: Ajv; draft2020: Ajv2020 } {
  const options = { strict: false, allErrors: false, validateFormats: true } as const;
  const draft7 = new Ajv(options);
  const draft2020 = new Ajv2020(options);
  addFormats(draft7);
  addFormats(draft2020);
  return { draft7, draft2020 };
}

/** Compiles one schema. */
export type SchemaCompiler = (schema: Record<string, unknown>) => CompiledSchema;

/**
 * A compiler for one verification: ajv keeps every schema it compiled, so a long-lived
 * instance would grow with every plugin ever verified.
 */
export function createSchemaCompiler(): SchemaCompiler {
  const validators = makeValidators();
  return (schema) => compileWith(validators, schema);
}

function compileWith(validators: { draft7: Ajv; draft2020: Ajv2020 }, schema: Record<string, unknown>): CompiledSchema {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  const { $schema: _ignored, ...body } = schema;
  const ajv = /2020-12|2019-09/.test(declared) ? validators.draft2020 : validators.draft7;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(body);
  } catch (error) {
    return { ok: false, error: (error as Error).message.slice(0, 300) };
  }
  return {
    ok: true,
    validate(value) {
      if (validate(value)) return undefined;
      return ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 300);
    },
  };
}
