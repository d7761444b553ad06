/**
 * @module runtime/supervisor/classify
 * Turns whatever a request to a plugin threw into one `QuiverError` (seed 003 "Error
 * Handling"): the deadline's own timeout or cancellation first, then MCP errors by code (a
 * closed connection is a crash, invalid params or an unknown method is the caller's input),
 * then anything else, as a crash when the connection is gone. Every message is redacted, since
 * plugins echo what they were given, credentials included.
 */
import { ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError, isQuiverError } from '../../core/errors.ts';
import { withoutMcpErrorPrefix } from '../../core/mcp-error-text.ts';
import type { Redactor } from '../redact.ts';
import type { UpstreamSpec } from '../types.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';

/** What failed: the plugin, the request, and the connection it ran on (if it got one). */
export interface FailedRequest {
  spec: Pick<UpstreamSpec, 'pluginId' | 'pluginName'>;
  redact: Redactor;
  /** e.g. `tools/call 'search'`. */
  what: string;
  /** The deadline's signal: a timeout or cancellation it carries wins over the error. */
  signal: AbortSignal;
  instance?: { connection: Pick<UpstreamConnection, 'isOpen'> | undefined; endReason: string | undefined } | undefined;
}

/** Maps `error` thrown by `request` to a QuiverError. */
export function classifyFailure(request: FailedRequest, error: unknown): QuiverError {
  const { spec, redact, what, signal, instance } = request;
  if (signal.aborted && isQuiverError(signal.reason)) return signal.reason;
  if (isQuiverError(error)) return error;
  const name = spec.pluginName;
  const connectionGone = instance !== undefined && !instance.connection?.isOpen();
  if (error instanceof McpError) {
    if (error.code === McpErrorCode.ConnectionClosed || connectionGone) {
      const reason = instance?.endReason ?? 'the connection closed';
      return new QuiverError(ErrorCodes.unavailable, redact(`plugin '${name}' crashed during ${what}: ${reason}`), {
        details: { reason: 'crashed', pluginId: spec.pluginId },
        cause: error,
      });
    }
    if (error.code === McpErrorCode.RequestTimeout) {
      return new QuiverError(ErrorCodes.timeout, redact(`plugin '${name}' did not answer ${what} in time`), { details: { pluginId: spec.pluginId }, cause: error });
    }
    if (error.code === McpErrorCode.InvalidParams || error.code === McpErrorCode.MethodNotFound) {
      return new QuiverError(ErrorCodes.invalidInput, redact(`plugin '${name}' rejected ${what}: ${withoutMcpErrorPrefix(error.message)}`), {
        details: { pluginId: spec.pluginId, mcpCode: error.code },
        cause: error,
      });
    }
    return new QuiverError('upstream_error', redact(`plugin '${name}' failed ${what}: ${withoutMcpErrorPrefix(error.message)}`), {
      kind: 'operational',
      details: { pluginId: spec.pluginId, mcpCode: error.code },
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (connectionGone) {
    return new QuiverError(ErrorCodes.unavailable, redact(`plugin '${name}' crashed during ${what}: ${instance?.endReason ?? message}`), {
      details: { reason: 'crashed', pluginId: spec.pluginId },
    });
  }
  return new QuiverError('upstream_error', redact(`plugin '${name}' failed ${what}: ${message}`), { kind: 'operational', details: { pluginId: spec.pluginId } });
}
