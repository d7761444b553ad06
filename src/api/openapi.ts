/**
 * @module api/openapi
 * The OpenAPI 3.1 document is assembled from the fragments each route module declares,
 * with request schemas produced from the same zod schemas that validate the requests.
 */
import { z } from 'zod';

/** One operation in OpenAPI terms (only the members Quiver fills in). */
export interface OpenApiOperation {
  summary: string;
  tags?: string[];
  requestBody?: z.ZodType;
  parameters?: Array<{ name: string; in: 'path' | 'query'; required?: boolean; description?: string }>;
  responses?: Record<string, string>;
}

/** Paths → methods → operations. */
export type OpenApiPaths = Record<string, Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', OpenApiOperation>>>;

function toJsonSchema(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });
  } catch {
    return { type: 'object' };
  }
}

/** Builds the OpenAPI document from every route module's paths. */
export function buildOpenApiDocument(version: string, fragments: OpenApiPaths[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const fragment of fragments) {
    for (const [path, methods] of Object.entries(fragment)) {
      const openApiPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
      const target = (paths[openApiPath] ??= {});
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation) continue;
        const pathParams = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
          name: m[1]!,
          in: 'path',
          required: true,
          schema: { type: 'string' },
        }));
        target[method] = {
          summary: operation.summary,
          tags: operation.tags ?? [],
          parameters: [
            ...pathParams,
            ...(operation.parameters ?? []).map((p) => ({ ...p, schema: { type: 'string' } })),
          ],
          ...(operation.requestBody
            ? { requestBody: { required: true, content: { 'application/json': { schema: toJsonSchema(operation.requestBody) } } } }
            : {}),
          responses: Object.fromEntries(
            Object.entries(operation.responses ?? { '200': 'OK' }).map(([status, description]) => [status, { description }]),
          ),
          security: [{ bearer: [] }],
        };
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Quiver API', version, description: 'MCP plugin hub and tool gateway' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A Quiver API key (qvr_…)' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
              required: ['code', 'message'],
            },
          },
        },
      },
    },
    paths,
  };
}
