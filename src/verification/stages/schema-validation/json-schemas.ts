/**
 * @module verification/stages/schema-validation/json-schemas
 * Every tool's inputSchema and outputSchema compiled by a real JSON Schema validator (ajv with
 * ajv-formats): draft-07 unless the schema names 2019-09 / 2020-12. A schema that does not
 * compile, or whose root is not an object schema (MCP requires `type: "object"` for both), is
 * an issue of that tool. One ajv instance per verification: ajv keeps what it compiled.
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { StageIssue, SubjectTool } from '../../types.ts';

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown;
// ajv-formats is CommonJS with `exports.default`; NodeNext sees the module object.
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

/** Compiles one schema; undefined when it compiles, else why not. */
export type SchemaCheck = (schema: unknown) => string | undefined;

/** A checker for one verification. */
export function createSchemaCheck(): SchemaCheck {
  const options = { strict: false, allErrors: true, validateFormats: true } as const;
  const draft7 = new Ajv(options);
  const draft2020 = new Ajv2020(options);
  addFormats(draft7);
  addFormats(draft2020);
  return (schema) => {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'is not a JSON object';
    const declared = typeof (schema as { $schema?: unknown }).$schema === 'string' ? (schema as { $schema: string }).$schema : '';
    const { $schema: _declared, $id: _id, ...body } = schema as Record<string, unknown>;
    const ajv = /2020-12|2019-09/.test(declared) ? draft2020 : draft7;
    try {
      ajv.compile(body);
    } catch (error) {
      return `does not compile: ${(error as Error).message.slice(0, 300)}`;
    }
    if (body['type'] !== 'object') return `has root type ${JSON.stringify(body['type'] ?? null)}; MCP requires "object"`;
    return undefined;
  };
}

/** Issues of every tool's schemas, and how many schemas were compiled. */
export function checkToolSchemas(tools: readonly SubjectTool[], check: SchemaCheck): { issues: StageIssue[]; compiled: number; failed: number } {
  const issues: StageIssue[] = [];
  let compiled = 0;
  let failed = 0;
  for (const tool of tools) {
    for (const [field, schema] of [['inputSchema', tool.inputSchema], ['outputSchema', tool.outputSchema]] as const) {
      if (schema === undefined) continue;
      compiled += 1;
      const problem = check(schema);
      if (problem === undefined) continue;
      failed += 1;
      issues.push({ severity: 'high', code: `invalid_${field === 'inputSchema' ? 'input' : 'output'}_schema`, message: `${field} ${problem}`, location: `tool:${tool.name}` });
    }
    if (tool.description === undefined || tool.description.trim() === '') {
      issues.push({ severity: 'low', code: 'no_description', message: 'the tool has no description', location: `tool:${tool.name}` });
    }
  }
  return { issues, compiled, failed };
}
