/**
 * @module intelligence/sources/openapi
 * The OpenAPI source (issue #14, seed 000 §3.3 "OpenAPI Transformation"): an OpenAPI 3.0 / 3.1
 * document (JSON or YAML, `$ref`s bundled and resolved by src/openapi) turned into tool
 * definitions — one per operation, with its input schema, summary and description, examples,
 * tags, side effects from the HTTP method (GET/HEAD read-only, DELETE destructive, PUT
 * idempotent) and the security schemes it needs. The spec is found in the code folder
 * (`openapi.{yaml,yml,json}`, also under `docs/`, `spec/`, `api/`) or given explicitly.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { contentHash } from '../../core/hash.ts';
import { openApiToolDefinitions, readOpenApiDocument, type OpenApiToolDefinition } from '../../openapi/index.ts';
import { sideEffectsFromAnnotations, retrySafeFromAnnotations } from './mcp.ts';
import type { JsonObject, SourceResult } from '../types.ts';

/** Where a plugin's spec is looked for, relative to its code folder, in order. */
export const OPENAPI_CANDIDATES = ['openapi', 'docs/openapi', 'spec/openapi', 'api/openapi', 'swagger', 'openapi/openapi']
  .flatMap((base) => ['yaml', 'yml', 'json'].map((extension) => `${base}.${extension}`));

/** The first spec file found in the code folder, if any. */
export async function findOpenApiSpec(codeDir: string): Promise<string | undefined> {
  for (const candidate of OPENAPI_CANDIDATES) {
    const path = join(codeDir, candidate);
    if (await access(path).then(() => true, () => false)) return path;
  }
  return undefined;
}

function definitionOf(tool: OpenApiToolDefinition): JsonObject {
  const annotations = tool.annotations as JsonObject;
  const definition: JsonObject = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    sideEffects: sideEffectsFromAnnotations(annotations),
  };
  if (tool.title !== undefined) definition['title'] = tool.title;
  if (tool.outputSchema !== undefined) definition['outputSchema'] = tool.outputSchema;
  const retrySafe = retrySafeFromAnnotations(annotations);
  if (retrySafe !== undefined) definition['retrySafe'] = retrySafe;
  if (tool.examples.length > 0) definition['examples'] = tool.examples.map((example) => ({ input: example.arguments }));
  if (tool.tags.length > 0) definition['semanticTags'] = tool.tags.map((tag) => tag.toLowerCase()).slice(0, 100);
  if (tool.operation.security.length > 0) definition['requiredContext'] = [`authentication: ${tool.operation.security.map((set) => set.join(' + ')).join(' or ')}`];
  if (tool.deprecated) definition['llmNotes'] = 'Deprecated by the API: prefer another operation when one fits.';
  return definition;
}

/** The OpenAPI source from a spec file (already located). */
export async function openApiSource(specPath: string): Promise<SourceResult> {
  const bundled = await readOpenApiDocument(specPath);
  const set = openApiToolDefinitions(bundled.document);
  const tools: Record<string, JsonObject> = {};
  for (const tool of set.tools) tools[tool.name] = definitionOf(tool);
  const schemes = Object.values(set.securitySchemes).map((scheme) => ({ name: scheme.name, description: scheme.description ?? `${scheme.type}${scheme.scheme === undefined ? '' : ` ${scheme.scheme}`}` }));
  return {
    source: 'openapi',
    inputHash: contentHash(bundled.document),
    partial: {
      tools,
      semantic: { domainContext: [[set.title, set.description].filter(Boolean).join(': ')] },
      ...(schemes.length > 0 ? { safety: { requiredPermissions: schemes } } : {}),
    },
    warnings: set.warnings,
  };
}
