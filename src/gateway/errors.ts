/**
 * @module gateway/errors
 * The one place the MCP front maps errors to the wire (STYLE.md habit 1, the MCP SDK's
 * convention): the caller's mistake (unknown tool, bad arguments) → JSON-RPC InvalidParams;
 * a plugin failing, timing out or behind an open breaker → a tool result with `isError: true`
 * and the reason, so the model can react; a bug in the gateway or backend → InternalError
 * with no details (logged with a reference).
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QuiverError, toQuiverError, type ErrorCode as QuiverErrorCode } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { overloadRetryAfter } from './admission.ts';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { withoutMcpErrorPrefix } from '../core/mcp-error-text.ts';

/** The code a backend uses when a plugin answered with a JSON-RPC error of its own. */
export const UPSTREAM_ERROR = 'upstream_error';

/**
 * How each error code reaches an MCP client — a `Record` over the closed union, so a new code
 * must be placed here:
 * - `unknown`: "this tool (or resource) does not exist for you" (never reveal more across orgs);
 * - `invalid`: the caller's arguments or request are wrong → InvalidParams;
 * - `result`: the tool could not do its work for a reason the model or user can act on → a tool
 *   result with `isError: true` naming the code (outside tools: an error carrying the code);
 * - `internal`: a bug → InternalError with a logged reference and no details.
 */
type McpWireForm = 'unknown' | 'invalid' | 'result' | 'internal';
const WIRE_FORM_BY_CODE: Record<QuiverErrorCode, McpWireForm> = {
  not_found: 'unknown',
  forbidden: 'unknown',
  unauthorized: 'unknown',
  invalid_input: 'invalid',
  payload_too_large: 'invalid',
  cancelled: 'invalid',
  // A credential the plugin needs is not configured: what it is, so the user can set it.
  missing_credential: 'result',
  quarantined: 'result',
  conflict: 'result',
  rate_limited: 'result',
  timeout: 'result',
  unavailable: 'result',
  circuit_open: 'result',
  upstream_error: 'result',
  install_failed: 'result',
  git_failed: 'result',
  npm_failed: 'result',
  embedder_failed: 'result',
  embedder_unavailable: 'result',
  secret_unreadable: 'result',
  data_dir_locked: 'result',
  invalid_config: 'internal',
  schema_too_new: 'internal',
  migration_changed: 'internal',
  internal: 'internal',
};

/** How an error code reaches an MCP client (see WIRE_FORM_BY_CODE). */
export function mcpWireForm(error: QuiverError): McpWireForm {
  // An error marked unexpected is a bug whatever its code says.
  return error.kind === 'unexpected' ? 'internal' : WIRE_FORM_BY_CODE[error.code];
}

/** InvalidParams for a tool the session cannot use. */
export function unknownToolError(name: string, hint?: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}${hint ? `. ${hint}` : ''}`);
}

/** The tool result a plugin failure becomes. */
export function pluginFailureResult(toolName: string, error: QuiverError): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `Tool '${toolName}' failed (${error.code}): ${error.message}` }],
  };
}

/**
 * Maps a failure of a `tools/call` to what the client receives: a result (plugin failures)
 * or a thrown McpError (caller mistakes, bugs).
 */
export function toolCallFailure(toolName: string, error: unknown, logger: Logger): CallToolResult {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams) throw error;
    throw internalError(error, logger, { tool: toolName });
  }
  const quiverError = toQuiverError(error);
  switch (mcpWireForm(quiverError)) {
    case 'unknown':
      throw unknownToolError(toolName);
    case 'invalid':
      throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${toolName}: ${quiverError.message}`);
    case 'result':
      return pluginFailureResult(toolName, quiverError);
    case 'internal':
      throw internalError(error, logger, { tool: toolName });
  }
}

/**
 * Maps a failure of a non-tool request (resources, prompts): caller mistakes → InvalidParams,
 * timeouts → RequestTimeout, other plugin trouble → InternalError naming the reason (there is
 * no `isError` outside tool results), bugs → InternalError without details.
 */
export function requestFailure(what: string, error: unknown, logger: Logger): McpError {
  if (error instanceof McpError) return error.code === ErrorCode.InvalidParams ? error : internalError(error, logger, { what });
  const quiverError = toQuiverError(error);
  switch (mcpWireForm(quiverError)) {
    case 'unknown':
      return new McpError(ErrorCode.InvalidParams, `Unknown ${what}`);
    case 'invalid':
      return new McpError(ErrorCode.InvalidParams, `Invalid ${what}: ${quiverError.message}`);
    case 'result': {
      const code = quiverError.code === 'timeout' ? ErrorCode.RequestTimeout : ErrorCode.InternalError;
      return new McpError(code, `${what} failed (${quiverError.code}): ${quiverError.message}`, { code: quiverError.code });
    }
    case 'internal':
      return internalError(error, logger, { what });
  }
}

/** JSON-RPC code of an overload refusal (implementation-defined server error range). */
export const OVERLOADED_ERROR_CODE = -32003;

/** An overload refusal (admission.ts) as a JSON-RPC error carrying `retryAfterSeconds`; any other error unchanged. */
export function overloadedRequest(error: unknown): unknown {
  const retryAfterSeconds = overloadRetryAfter(error);
  if (retryAfterSeconds === undefined) return error;
  return new McpError(OVERLOADED_ERROR_CODE, (error as Error).message, { retryAfterSeconds });
}

let bugCounter = 0;

/** An InternalError that hides the cause from the client and logs it with a reference. */
export function internalError(error: unknown, logger: Logger, context: object): McpError {
  bugCounter += 1;
  const reference = `gw-${Date.now().toString(36)}-${bugCounter}`;
  logger.error({ err: error, reference, ...context }, 'gateway internal error');
  return new McpError(ErrorCode.InternalError, `Internal error in the Quiver gateway (reference ${reference})`);
}

/** An McpError with the SDK's "MCP error N:" prefix taken off its message (in place); anything else as it is. */
export function withBareMessage(error: unknown): unknown {
  if (error instanceof McpError) Object.defineProperty(error, 'message', { value: withoutMcpErrorPrefix(error.message), configurable: true, writable: true });
  return error;
}

/**
 * Makes a session's server send an McpError's own text on the wire. The SDK writes
 * `MCP error <code>: ` into `Error.message` and sends that; the client's McpError adds the
 * prefix again, so callers read it twice (issue #15). The code still travels as the JSON-RPC
 * `code`. Call before registering handlers.
 */
export function sendBareErrorMessages(server: Server): void {
  type Handler = (...args: unknown[]) => unknown;
  const register = server.setRequestHandler.bind(server) as unknown as (schema: unknown, handler: Handler) => void;
  (server as unknown as { setRequestHandler: (schema: unknown, handler: Handler) => void }).setRequestHandler = (schema, handler) =>
    register(schema, async (...args: unknown[]) => {
      try {
        return await handler(...args);
      } catch (error) {
        throw withBareMessage(error);
      }
    });
}
