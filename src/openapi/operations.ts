/**
 * @module openapi/operations
 * Operations → MCP tool definitions (issue #14). Each operation of each path becomes one tool:
 * - name from `operationId`, else `method_path`, cut to MCP tool-name rules (letters, digits,
 *   `_ - .`, at most 64 characters for OpenAI, never `__`) and made unique;
 * - input schema: one property per path, query, header and cookie parameter (a name used in two
 *   places gets its location as prefix, e.g. `header_id`), plus `body` for the request body;
 * - description from summary and description; examples from the document's examples;
 * - annotations from the HTTP method (GET/HEAD read-only; PUT/DELETE idempotent; DELETE destructive);
 * - output schema from the first 2xx JSON response (wrapped as `{result}` when not an object);
 * - security requirements resolved against `components.securitySchemes`.
 * The document must be bundled first (refs.ts): every `$ref` is local.
 */
import { invalidInput } from '../core/errors.ts';
import { followRef, inlineRefs } from './refs.ts';
import { isObjectSchema, toJsonSchema } from './schema.ts';
import { readSecuritySchemes, securityAlternatives } from './security.ts';
import { HTTP_METHODS, type BodyBinding, type HttpMethod, type OpenApiToolDefinition, type OpenApiToolSet, type ParameterBinding, type ParameterLocation } from './types.ts';

type Json = Record<string, unknown>;

const MAX_NAME = 64;
const MAX_DESCRIPTION = 4_000;
/** Headers OpenAPI says are ignored as parameters: the executor sets them. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A tool name from free text: MCP-safe characters, no `__`, at most 64 characters. */
export function sanitizeToolName(raw: string): string {
  const cleaned = raw
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[_.-]+|[_.-]+$/g, '');
  return cleaned.slice(0, MAX_NAME).replace(/[_.-]+$/, '') || 'operation';
}

/** The fallback name of an operation without operationId: `get_pet_petId`. */
function nameFromPath(method: HttpMethod, path: string): string {
  return sanitizeToolName(`${method}_${path.replace(/[{}]/g, '')}`);
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = base;
  for (let counter = 2; taken.has(name); counter += 1) {
    const suffix = `_${counter}`;
    name = `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}

function schemaOf(document: Json, version: string, schema: unknown): Json {
  const converted = toJsonSchema(inlineRefs(document, schema), version);
  return isObject(converted) ? converted : {};
}

/** Path-level parameters overridden by operation-level ones of the same name and location. */
function mergedParameters(document: Json, pathItem: Json, operation: Json): Json[] {
  const byKey = new Map<string, Json>();
  for (const list of [pathItem['parameters'], operation['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const parameter = followRef(document, entry);
      if (!isObject(parameter) || typeof parameter['name'] !== 'string' || typeof parameter['in'] !== 'string') continue;
      byKey.set(`${parameter['in']}:${parameter['name']}`, parameter);
    }
  }
  return [...byKey.values()];
}

function parameterSchema(document: Json, version: string, parameter: Json): Json {
  let schema: unknown = parameter['schema'];
  if (schema === undefined && isObject(parameter['content'])) schema = (Object.values(parameter['content'])[0] as Json | undefined)?.['schema'];
  const out = schemaOf(document, version, schema ?? { type: 'string' });
  const description = text(parameter['description']);
  if (description !== undefined && out['description'] === undefined) out['description'] = description;
  if (parameter['deprecated'] === true) out['deprecated'] = true;
  const example = exampleOf(document, parameter);
  if (example !== undefined && out['examples'] === undefined) out['examples'] = [example];
  return out;
}

/** `example`, else the first of `examples` (an Example Object's `value`). */
function exampleOf(document: Json, holder: Json): unknown {
  if (holder['example'] !== undefined) return holder['example'];
  if (isObject(holder['examples'])) {
    const first = followRef(document, Object.values(holder['examples'])[0]);
    if (isObject(first) && first['value'] !== undefined) return first['value'];
  }
  return undefined;
}

/** The media type a body or response is read in: JSON first, then forms, then text, then the first listed. */
export function preferredMediaType(content: Json): string | undefined {
  const types = Object.keys(content);
  const ranked = [
    (type: string) => /^application\/json\b/i.test(type),
    (type: string) => /\+json\b/i.test(type) || /^application\/[\w.-]*json/i.test(type),
    (type: string) => /^application\/x-www-form-urlencoded/i.test(type),
    (type: string) => /^multipart\/form-data/i.test(type),
    (type: string) => /^text\//i.test(type),
  ];
  for (const test of ranked) {
    const found = types.find(test);
    if (found !== undefined) return found;
  }
  return types[0];
}

interface InputParts {
  properties: Record<string, unknown>;
  required: string[];
  parameters: ParameterBinding[];
  body: BodyBinding | undefined;
  example: Record<string, unknown>;
}

function defaultStyle(location: ParameterLocation): string {
  return location === 'query' || location === 'cookie' ? 'form' : 'simple';
}

function inputParts(document: Json, version: string, pathItem: Json, operation: Json): InputParts {
  const parts: InputParts = { properties: {}, required: [], parameters: [], body: undefined, example: {} };
  for (const parameter of mergedParameters(document, pathItem, operation)) {
    const location = parameter['in'] as ParameterLocation;
    const name = parameter['name'] as string;
    if (!['path', 'query', 'header', 'cookie'].includes(location)) continue;
    if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
    let property = name;
    if (Object.hasOwn(parts.properties, property)) property = `${location}_${name}`;
    const required = location === 'path' || parameter['required'] === true;
    const style = typeof parameter['style'] === 'string' ? parameter['style'] : defaultStyle(location);
    const explode = typeof parameter['explode'] === 'boolean' ? parameter['explode'] : style === 'form';
    const schema = parameterSchema(document, version, parameter);
    parts.properties[property] = schema;
    if (required) parts.required.push(property);
    parts.parameters.push({ property, name, in: location, required, style, explode });
    const example = Array.isArray(schema['examples']) ? schema['examples'][0] : undefined;
    if (example !== undefined) parts.example[property] = example;
  }
  const requestBody = followRef(document, operation['requestBody']);
  if (isObject(requestBody) && isObject(requestBody['content'])) {
    const mediaType = preferredMediaType(requestBody['content']);
    const media = mediaType === undefined ? undefined : followRef(document, requestBody['content'][mediaType]);
    if (mediaType !== undefined && isObject(media)) {
      const property = Object.hasOwn(parts.properties, 'body') ? 'requestBody' : 'body';
      const schema = schemaOf(document, version, media['schema'] ?? {});
      const description = text(requestBody['description']);
      parts.properties[property] = { ...schema, ...(description !== undefined && schema['description'] === undefined ? { description } : {}) };
      const required = requestBody['required'] === true;
      if (required) parts.required.push(property);
      parts.body = { property, mediaType, required };
      const example = exampleOf(document, media) ?? (Array.isArray(schema['examples']) ? schema['examples'][0] : undefined);
      if (example !== undefined) parts.example[property] = example;
    }
  }
  return parts;
}

/** The first 2xx response's JSON schema as an MCP output schema; `wrapsResult` when it had to be wrapped. */
function outputOf(document: Json, version: string, operation: Json): { outputSchema?: OpenApiToolDefinition['outputSchema']; wrapsResult: boolean } {
  const responses = isObject(operation['responses']) ? operation['responses'] : {};
  const code = Object.keys(responses).sort().find((status) => /^2(\d\d|XX)$/i.test(status));
  const response = code === undefined ? undefined : followRef(document, responses[code]);
  if (!isObject(response) || !isObject(response['content'])) return { wrapsResult: false };
  const mediaType = Object.keys(response['content']).find((type) => /json/i.test(type));
  const media = mediaType === undefined ? undefined : followRef(document, response['content'][mediaType]);
  if (!isObject(media) || media['schema'] === undefined) return { wrapsResult: false };
  const schema = schemaOf(document, version, media['schema']);
  if (isObjectSchema(schema)) return { outputSchema: { ...schema, type: 'object' }, wrapsResult: false };
  return { outputSchema: { type: 'object', properties: { result: schema }, required: ['result'] }, wrapsResult: true };
}

function describe(operation: Json, method: HttpMethod, path: string): string {
  const summary = text(operation['summary']);
  const details = text(operation['description']);
  const parts = [summary, details !== summary ? details : undefined].filter((part): part is string => part !== undefined);
  if (operation['deprecated'] === true) parts.push('Deprecated.');
  parts.push(`(HTTP ${method.toUpperCase()} ${path})`);
  const description = parts.join('\n\n');
  return description.length > MAX_DESCRIPTION ? `${description.slice(0, MAX_DESCRIPTION - 1)}…` : description;
}

function annotationsFor(method: HttpMethod, title: string | undefined): OpenApiToolDefinition['annotations'] {
  const readOnly = method === 'get' || method === 'head' || method === 'options';
  return {
    ...(title === undefined ? {} : { title }),
    readOnlyHint: readOnly,
    ...(readOnly ? {} : { destructiveHint: method === 'delete' }),
    ...(method === 'put' || method === 'delete' || readOnly ? { idempotentHint: true } : {}),
    openWorldHint: true,
  };
}

/** A Server Object's URL with its variables replaced by their defaults (`https://{region}.api.example.com`). */
function serverUrl(server: Json): string {
  const variables = isObject(server['variables']) ? server['variables'] : {};
  return (server['url'] as string).replace(/\{([^}]+)\}/g, (match, name: string) => {
    const variable = variables[name];
    return isObject(variable) && typeof variable['default'] === 'string' ? variable['default'] : match;
  });
}

/** Checks the document is OpenAPI 3.0 or 3.1 and returns its version. */
function assertOpenApi3(document: unknown): string {
  if (!isObject(document)) throw invalidInput('an OpenAPI document must be an object');
  if (typeof document['swagger'] === 'string') throw invalidInput(`Swagger ${document['swagger']} documents are not supported: convert to OpenAPI 3 (e.g. with swagger2openapi)`);
  const version = document['openapi'];
  if (typeof version !== 'string' || !/^3\.[01]\.\d+/.test(version)) throw invalidInput(`not an OpenAPI 3.0 or 3.1 document (openapi: ${JSON.stringify(version ?? null)})`);
  if (document['paths'] !== undefined && !isObject(document['paths'])) throw invalidInput("the OpenAPI document's 'paths' must be an object");
  return version;
}

/**
 * Turns a bundled OpenAPI 3.0 / 3.1 document into one MCP tool definition per operation.
 * Throws `invalid_input` when the document is not OpenAPI 3.
 *
 * @example
 * const { tools } = openApiToolDefinitions(bundled.document);
 * tools[0]; // { name: 'addPet', inputSchema: { type: 'object', properties: { body: … } }, … }
 */
export function openApiToolDefinitions(document: unknown): OpenApiToolSet {
  const version = assertOpenApi3(document);
  const root = document as Json;
  const info = isObject(root['info']) ? root['info'] : {};
  const warnings: string[] = [];
  const securitySchemes = readSecuritySchemes(root, warnings);
  const taken = new Set<string>();
  const tools: OpenApiToolDefinition[] = [];
  for (const [path, rawItem] of Object.entries(isObject(root['paths']) ? root['paths'] : {})) {
    const pathItem = followRef(root, rawItem);
    if (!isObject(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const operationId = text(operation['operationId']);
      const name = uniqueName(operationId === undefined ? nameFromPath(method, path) : sanitizeToolName(operationId), taken);
      const parts = inputParts(root, version, pathItem, operation);
      const output = outputOf(root, version, operation);
      const summary = text(operation['summary']);
      tools.push({
        name,
        ...(summary === undefined ? {} : { title: summary }),
        description: describe(operation, method, path),
        inputSchema: { type: 'object', properties: parts.properties, ...(parts.required.length > 0 ? { required: parts.required } : {}), additionalProperties: false },
        ...(output.outputSchema === undefined ? {} : { outputSchema: output.outputSchema }),
        annotations: annotationsFor(method, summary),
        examples: Object.keys(parts.example).length > 0 ? [{ arguments: parts.example }] : [],
        tags: Array.isArray(operation['tags']) ? operation['tags'].filter((tag): tag is string => typeof tag === 'string') : [],
        deprecated: operation['deprecated'] === true,
        operation: {
          method,
          path,
          ...(operationId === undefined ? {} : { operationId }),
          parameters: parts.parameters,
          ...(parts.body === undefined ? {} : { body: parts.body }),
          security: securityAlternatives(operation['security'] ?? root['security'], securitySchemes, name, warnings),
          wrapsResult: output.wrapsResult,
        },
      });
    }
  }
  const servers = Array.isArray(root['servers']) ? root['servers'].flatMap((server) => (isObject(server) && typeof server['url'] === 'string' ? [serverUrl(server)] : [])) : [];
  return { title: text(info['title']) ?? 'OpenAPI', version: text(info['version']) ?? '0', description: text(info['description']), openapi: version, servers, securitySchemes, tools, warnings };
}
