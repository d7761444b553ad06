/**
 * @module test/helpers/gateway-backend/local-backend/upstream-error
 * Maps what the SDK client throws to the backend's error contract (`gateway/backend.ts`):
 * the caller's mistakes as `invalid_input`, plugin trouble as `timeout`, `unavailable` or
 * `upstream_error` (operational), a cancelled request as `unavailable`.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../../../src/core/errors.ts';
import { withoutMcpErrorPrefix } from '../../../../src/core/mcp-error-text.ts';
import { UPSTREAM_ERROR } from '../../../../src/gateway/errors.ts';
import type { LocalPluginSpec } from './types.ts';

/** The QuiverError for a failure of `what` ("a call of 'x__y'") at the plugin. */
export function upstreamError(spec: LocalPluginSpec, what: string, error: unknown, signal: AbortSignal | undefined): QuiverError {
  if (signal?.aborted) return new QuiverError(ErrorCodes.unavailable, `${what} was cancelled`, { cause: error });
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams) return new QuiverError(ErrorCodes.invalidInput, error.message, { cause: error });
    if (error.code === ErrorCode.RequestTimeout) {
      return new QuiverError(ErrorCodes.timeout, `plugin '${spec.name}' did not answer ${what} within ${spec.callTimeoutMs ?? 30_000} ms`, { cause: error });
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return new QuiverError(ErrorCodes.unavailable, `plugin '${spec.name}' exited during ${what}`, { cause: error });
    }
    return new QuiverError(UPSTREAM_ERROR, `plugin '${spec.name}' answered ${what} with an error: ${withoutMcpErrorPrefix(error.message)}`, { cause: error, kind: 'operational' });
  }
  return new QuiverError(ErrorCodes.unavailable, `plugin '${spec.name}' is unavailable: ${(error as Error).message}`, { cause: error });
}
