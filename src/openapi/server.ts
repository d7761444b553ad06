/**
 * @module openapi/server
 * An MCP server generated from an OpenAPI document: `tools/list` serves the tool definitions
 * (operations.ts), `tools/call` checks the arguments against the input schema and executes the
 * operation (execute.ts). It runs inside Quiver, connected to the supervisor's client over an
 * in-memory transport (runtime/in-process.ts), so timeouts, breakers, rate limits and call
 * events apply exactly as for a plugin process. Errors follow the SDK's families: an unknown
 * tool or bad arguments → InvalidParams; an unreachable API → InternalError (counted by the
 * breaker); an HTTP error status → a result with `isError: true`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { ErrorCodes, isQuiverError } from '../core/errors.ts';
import { executeOperation, type ExecuteSettings } from './execute.ts';
import type { OpenApiToolDefinition, OpenApiToolSet } from './types.ts';

/** Options of an OpenAPI MCP server. */
export interface OpenApiServerOptions extends Omit<ExecuteSettings, 'securitySchemes'> {
  toolSet: OpenApiToolSet;
  /** serverInfo name and version (the plugin's). */
  name: string;
  version: string;
}

/** The MCP view of a definition. */
export function toMcpTool(tool: OpenApiToolDefinition): Tool {
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    annotations: tool.annotations,
  };
}

interface CompiledTool {
  definition: OpenApiToolDefinition;
  input: JsonSchemaValidator<unknown> | undefined;
  output: JsonSchemaValidator<unknown> | undefined;
}

function compile(provider: AjvJsonSchemaValidator, schema: object | undefined): JsonSchemaValidator<unknown> | undefined {
  if (schema === undefined) return undefined;
  try {
    return provider.getValidator(schema as never);
  } catch {
    // A schema the validator cannot compile is not checked (the API judges the request).
    return undefined;
  }
}

/** A JSON response must match the documented schema, as MCP clients check it against the output schema. */
function checkOutput(tool: CompiledTool, result: CallToolResult): CallToolResult {
  if (result.isError || tool.definition.outputSchema === undefined) return result;
  if (result.structuredContent === undefined) {
    return { isError: true, content: [...result.content, { type: 'text', text: `the API answered ${tool.definition.name} without the JSON body its OpenAPI description promises` }] };
  }
  const verdict = tool.output?.(result.structuredContent);
  if (verdict && !verdict.valid) {
    return { isError: true, content: [...result.content, { type: 'text', text: `the API's response does not match its OpenAPI description: ${verdict.errorMessage}` }] };
  }
  return result;
}

/** Creates the server; connect it to a transport to use it. */
export function createOpenApiServer(options: OpenApiServerOptions): Server {
  const provider = new AjvJsonSchemaValidator();
  const tools = new Map<string, CompiledTool>(
    options.toolSet.tools.map((definition) => [definition.name, { definition, input: compile(provider, definition.inputSchema), output: compile(provider, definition.outputSchema) }]),
  );
  const listed = options.toolSet.tools.map(toMcpTool);
  const server = new Server(
    { name: options.name, version: options.version },
    { capabilities: { tools: {} }, ...(options.toolSet.description === undefined ? {} : { instructions: options.toolSet.description.slice(0, 2_000) }) },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name}'`);
    const args = request.params.arguments ?? {};
    const verdict = tool.input?.(args);
    if (verdict && !verdict.valid) throw new McpError(ErrorCode.InvalidParams, `invalid arguments for '${tool.definition.name}': ${verdict.errorMessage}`);
    try {
      const result = await executeOperation(tool.definition, args, { ...options, securitySchemes: options.toolSet.securitySchemes }, extra.signal);
      return checkOutput(tool, result);
    } catch (error) {
      if (isQuiverError(error) && error.code === ErrorCodes.invalidInput) throw new McpError(ErrorCode.InvalidParams, error.message);
      if (isQuiverError(error)) throw new McpError(ErrorCode.InternalError, error.message, { code: error.code });
      throw error;
    }
  });
  return server;
}
