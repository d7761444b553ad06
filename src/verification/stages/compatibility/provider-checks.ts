/**
 * @module verification/stages/compatibility/provider-checks
 * Does each tool survive the conversions Quiver makes for LLM providers
 * (selection/provider-formats.ts, issue #10 "schemas that survive the OpenAI / Anthropic /
 * Gemini conversions")? For each tool and provider the converted tool is checked against that
 * provider's rules:
 * - OpenAI and Anthropic: the parameters are a JSON Schema of `type: object` without
 *   `anyOf`/`oneOf`/`allOf`/`not`/`enum` at the top (both APIs refuse those there), the schema
 *   compiles, and arguments generated from the original schema still pass the converted one;
 * - Gemini: the parameters use only the OpenAPI 3.0 subset `FunctionDeclaration` takes (known
 *   keys and types, `anyOf`, objects with properties, string enums; docs/selection.md), and lossy steps of the conversion
 *   are reported (the model then sees less than the plugin declared);
 * - every provider: the provider-visible name follows its name rule (a renamed tool still
 *   works, through the name map, so that is only noted).
 */
import { NAME_SEPARATOR } from '../../../core/names.ts';
import { formatTool, providerToolName, toGeminiSchema, type SelectionProvider } from '../../../selection/provider-formats.ts';
import { generateArguments } from '../probe/argument-generator.ts';
import type { SchemaCompiler } from '../probe/json-schema.ts';
import type { ProbeTool } from '../probe/types.ts';

/** One problem of one tool with one provider. */
export interface ProviderProblem {
  provider: SelectionProvider;
  tool: string;
  /** `invalid`: the provider would refuse it; `lossy`: accepted but with less than declared; `renamed`: a different name. */
  kind: 'invalid' | 'lossy' | 'renamed';
  message: string;
}

type Json = Record<string, unknown>;

const GEMINI_KEYS = new Set(['type', 'format', 'description', 'nullable', 'enum', 'properties', 'required', 'items', 'minItems', 'maxItems', 'minimum', 'maximum', 'anyOf']);
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
/**
 * Notes of `toGeminiSchema` that lose what the plugin declared (a constraint dropped, a value
 * carried as text); inlining, collapsing and union rewrites keep the meaning and are not counted.
 */
const LOSSY_NOTE = /dropped|sent as (a JSON )?string|sent as nullable string|moved to the description/;
const TOP_LEVEL_REFUSED = ['anyOf', 'oneOf', 'allOf', 'not', 'enum'];

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Why a converted Gemini schema breaks the subset, or undefined. */
export function geminiSchemaProblem(schema: unknown, path = '$'): string | undefined {
  if (!isObject(schema)) return `${path} is not an object`;
  const unknownKey = Object.keys(schema).find((key) => !GEMINI_KEYS.has(key));
  if (unknownKey !== undefined) return `${path} has '${unknownKey}'`;
  if (Array.isArray(schema.anyOf)) {
    for (const [index, member] of schema.anyOf.entries()) {
      const problem = geminiSchemaProblem(member, `${path}.anyOf[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof schema.type !== 'string' || !GEMINI_TYPES.has(schema.type)) return `${path} has no valid type`;
  if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string'))) return `${path} has a non-string enum`;
  if (schema.type === 'object') {
    if (!isObject(schema.properties) || Object.keys(schema.properties).length === 0) return `${path} is an object without properties`;
    for (const [name, child] of Object.entries(schema.properties)) {
      const problem = geminiSchemaProblem(child, `${path}.${name}`);
      if (problem) return problem;
    }
  }
  if (schema.type === 'array') return geminiSchemaProblem(schema.items, `${path}[]`);
  return undefined;
}

function objectProviderProblem(tool: ProbeTool, provider: 'openai' | 'anthropic', compile: SchemaCompiler, qualified: string): ProviderProblem | undefined {
  const formatted = formatTool({ qualifiedName: qualified, description: tool.description ?? '', parameters: tool.inputSchema }, provider).schema;
  const parameters = (provider === 'openai' ? (formatted.function as Json).parameters : formatted.input_schema) as Json;
  const refused = TOP_LEVEL_REFUSED.find((key) => parameters[key] !== undefined);
  if (parameters.type !== 'object' || refused !== undefined) {
    return { provider, tool: tool.name, kind: 'invalid', message: `the parameters have '${refused ?? 'a non-object type'}' at the top level, which ${provider} refuses` };
  }
  const compiled = compile(parameters);
  if (!compiled.ok) return { provider, tool: tool.name, kind: 'invalid', message: `the converted parameters do not compile: ${compiled.error}` };
  const problem = compiled.validate(generateArguments(tool.inputSchema));
  if (problem !== undefined) return { provider, tool: tool.name, kind: 'invalid', message: `arguments valid for the tool fail the converted parameters: ${problem}` };
  return undefined;
}

/** Checks every tool against every provider; renames and lossy steps are reported too. */
export function checkProviderFormats(pluginName: string, tools: readonly ProbeTool[], compile: SchemaCompiler): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  for (const tool of tools) {
    const qualified = `${pluginName}${NAME_SEPARATOR}${tool.name}`;
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      if (providerToolName(qualified, provider) !== qualified) problems.push({ provider, tool: tool.name, kind: 'renamed', message: `${provider} sees it as '${providerToolName(qualified, provider)}'` });
    }
    for (const provider of ['openai', 'anthropic'] as const) {
      const problem = objectProviderProblem(tool, provider, compile, qualified);
      if (problem) problems.push(problem);
    }
    const gemini = toGeminiSchema(tool.inputSchema);
    const invalid = gemini.schema === undefined ? undefined : geminiSchemaProblem(gemini.schema);
    if (invalid !== undefined) problems.push({ provider: 'gemini', tool: tool.name, kind: 'invalid', message: `the converted parameters break Gemini's schema subset: ${invalid}` });
    else {
      const lossy = gemini.notes.filter((note) => LOSSY_NOTE.test(note));
      if (lossy.length > 0) problems.push({ provider: 'gemini', tool: tool.name, kind: 'lossy', message: lossy.slice(0, 3).join('; ') });
    }
  }
  return problems;
}
