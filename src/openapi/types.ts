/**
 * @module openapi/types
 * What an OpenAPI operation becomes: an MCP tool definition (name, schemas, annotations,
 * examples) plus the binding that tells the executor how the tool's arguments map back onto
 * the HTTP request (path, query, header, cookie parameters, the body, the security
 * requirements). Plain data, so a definition can be stored, hashed or turned into a PID.
 */

/** HTTP methods an OpenAPI Path Item may hold. */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Where a parameter travels (OpenAPI Parameter Object `in`). */
export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

/** One parameter: the tool argument (`property`) and where it goes in the request. */
export interface ParameterBinding {
  property: string;
  name: string;
  in: ParameterLocation;
  required: boolean;
  /** Serialization (OpenAPI 3 `style` / `explode`), defaulted per location. */
  style: string;
  explode: boolean;
}

/** The request body: the tool argument holding it and its media type. */
export interface BodyBinding {
  property: string;
  mediaType: string;
  required: boolean;
}

/** A security scheme, reduced to what the executor needs to authenticate. */
export interface SecurityScheme {
  /** The key under `components.securitySchemes`. */
  name: string;
  type: 'apiKey' | 'http' | 'oauth2' | 'openIdConnect' | 'mutualTLS';
  /** `http` schemes: `bearer`, `basic`, … (lowercase). */
  scheme?: string | undefined;
  /** `apiKey` schemes: where the key goes and under which name. */
  in?: 'header' | 'query' | 'cookie' | undefined;
  parameterName?: string | undefined;
  description?: string | undefined;
}

/** How to send one operation. `security` lists alternatives, each a set of schemes used together; `[]` needs none. */
export interface OperationBinding {
  method: HttpMethod;
  path: string;
  operationId?: string | undefined;
  parameters: ParameterBinding[];
  body?: BodyBinding | undefined;
  security: string[][];
  /** True when a JSON response is wrapped as `{ result: … }` (the schema is not an object). */
  wrapsResult: boolean;
}

/** MCP tool annotations derived from the HTTP method. */
export interface ToolAnnotations {
  title?: string | undefined;
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
}

/** One operation as an MCP tool. */
export interface OpenApiToolDefinition {
  name: string;
  title?: string | undefined;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  outputSchema?: (Record<string, unknown> & { type: 'object' }) | undefined;
  annotations: ToolAnnotations;
  /** Example arguments taken from the document's `example` / `examples`. */
  examples: Array<{ arguments: Record<string, unknown> }>;
  tags: string[];
  deprecated: boolean;
  operation: OperationBinding;
}

/** Everything a document yields. */
export interface OpenApiToolSet {
  title: string;
  version: string;
  description: string | undefined;
  /** The `openapi` version of the document (3.0.x or 3.1.x). */
  openapi: string;
  /** Server URLs the document lists (possibly relative). */
  servers: string[];
  securitySchemes: Record<string, SecurityScheme>;
  tools: OpenApiToolDefinition[];
  /** Operations skipped or simplified, and why. */
  warnings: string[];
}
