/**
 * @module gateway/stdio-call-lane
 * Issue #28: a 2025-era stdio session's plain `tools/call` of a plugin tool answered without the
 * SDK server's dispatch. The SDK runs, per request, the JSON-RPC request schema, the
 * `tools/call` request schema twice (the protocol's handler wrapper and the server's), a task
 * store lookup and a chain of promises before Quiver's handler; the lane checks the same shape by
 * hand and runs the same handler (`answerCallTool`, so access, argument validation, the loop
 * guard, limits, breakers, the deadline, screening and telemetry are the ones the SDK path runs),
 * then does what the SDK's wrappers do with the outcome: the result is checked against
 * `CallToolResultSchema` (its parsed data is what goes out, as the SDK sends it), an `McpError`
 * from the handler goes out bare (`errors.ts` `sendBareErrorMessages`), any error becomes the
 * JSON-RPC error object the SDK's protocol builds, and a cancelled call sends nothing.
 * Everything else takes the SDK path: another method, a meta-tool, a call with a progress token,
 * a task or a related task, a malformed request or one with keys the SDK's strict JSON-RPC
 * request schema refuses (the SDK's own error or silence then), a call before
 * `initialize`, an id already in flight here. A `notifications/cancelled` for a lane call aborts
 * its signal (and goes on to the SDK, which finds nothing of its own); closing aborts every one.
 */
import { CallToolResultSchema, ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { forwardingFor } from './client-forwarding.ts';
import { withBareMessage } from './errors.ts';
import { META_TOOL_NAMES } from './meta-tools.ts';
import { answerCallTool } from './request-handlers.ts';
import type { SessionState } from './session-state.ts';

/** The slice of the session's transport the lane uses; `send` is looked up per answer (telemetry wraps it). */
export interface LaneTransport {
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  send(message: JSONRPCMessage): Promise<void>;
}

/** A running lane. */
export interface StdioCallLane {
  /** How many calls the lane has taken (answered or in flight), for tests and diagnostics. */
  readonly taken: number;
  /** Aborts every call in flight on the lane (the connection closed). */
  close(): void;
}

type Params = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request id as the SDK's JSON-RPC request schema accepts it (a string or a safe integer: zod 4's `int()`). */
function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/** The SDK's JSON-RPC request schema is strict: a message with any other key is not a request to it. */
function hasOnlyRequestKeys(message: Record<string, unknown>): boolean {
  for (const key in message) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  return true;
}

/**
 * Routes a connected session's plain plugin `tools/call` requests past the SDK's dispatch. Call it
 * after `state.connect(transport)` (the server's `onmessage` is the fallback) and before
 * telemetry wraps the transport (so the lane's requests are measured as any other).
 */
export function installStdioCallLane(state: SessionState, transport: LaneTransport): StdioCallLane {
  const sdk = transport.onmessage;
  if (!sdk) throw new Error('installStdioCallLane: connect the session first');
  const inFlight = new Map<RequestId, AbortController>();
  let taken = 0;

  /** The call's params when the lane may answer it, else undefined (the SDK answers). */
  function plainCall(message: Record<string, unknown>): Params | undefined {
    if (message.method !== 'tools/call' || message.jsonrpc !== '2.0' || !isRequestId(message.id) || inFlight.has(message.id) || !hasOnlyRequestKeys(message)) return undefined;
    const params = message.params;
    if (!isPlainObject(params) || typeof params.name !== 'string' || META_TOOL_NAMES.has(params.name) || params.task !== undefined) return undefined;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
    const meta = params._meta;
    if (meta !== undefined && (!isPlainObject(meta) || meta.progressToken !== undefined || meta[RELATED_TASK_META_KEY] !== undefined)) return undefined;
    // Before `initialize` the caller's capabilities are unknown: the SDK path answers as it does.
    if (!state.server.getClientCapabilities()) return undefined;
    return params as Params;
  }

  function cancel(message: Record<string, unknown>): void {
    const params = message.params;
    if (!isPlainObject(params) || !isRequestId(params.requestId)) return;
    inFlight.get(params.requestId)?.abort(params.reason);
  }

  function answer(id: RequestId, params: Params): void {
    const controller = new AbortController();
    const { signal } = controller;
    inFlight.set(id, controller);
    taken += 1;
    const server = state.server;
    // What the SDK hands a handler as `extra` and client-forwarding.ts uses: notifications and
    // requests to the client on behalf of this request, silent once it is cancelled.
    const extra = {
      signal,
      sendNotification: async (notification: Parameters<typeof server.notification>[0]) => {
        if (signal.aborted) return;
        await server.notification(notification, { relatedRequestId: id });
      },
      sendRequest: async (request: Parameters<typeof server.request>[0], resultSchema: Parameters<typeof server.request>[1], options?: Parameters<typeof server.request>[2]) => {
        if (signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled');
        return server.request(request, resultSchema, { ...options, relatedRequestId: id });
      },
    };
    const request = { method: 'tools/call' as const, params };
    answerCallTool(state.core, state, params, signal, extra.sendNotification, forwardingFor(state, request, extra as never))
      .then(
        (result) => {
          if (signal.aborted) return undefined;
          // The SDK server's check of a `tools/call` result (server/index.js setRequestHandler).
          const checked = CallToolResultSchema.safeParse(result);
          if (!checked.success) return sendError(id, new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${checked.error.message}`));
          return transport.send({ result: checked.data as CallToolResult, jsonrpc: '2.0', id });
        },
        (error: unknown) => {
          if (signal.aborted) return undefined;
          return sendError(id, withBareMessage(error));
        },
      )
      .catch((error: unknown) => server.onerror?.(new Error(`Failed to send response: ${String(error)}`)))
      .finally(() => {
        if (inFlight.get(id) === controller) inFlight.delete(id);
      });
  }

  /** The JSON-RPC error object the SDK's protocol builds from a handler's error. */
  function sendError(id: RequestId, error: unknown): Promise<void> {
    const fields = (isPlainObject(error) || error instanceof Error ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
    return transport.send({
      jsonrpc: '2.0',
      id,
      error: {
        code: Number.isSafeInteger(fields.code) ? (fields.code as number) : ErrorCode.InternalError,
        message: (fields.message as string | undefined) ?? 'Internal error',
        ...(fields.data !== undefined ? { data: fields.data } : {}),
      },
    });
  }

  transport.onmessage = (message: JSONRPCMessage) => {
    const raw = message as unknown as Record<string, unknown>;
    if (raw.method === 'notifications/cancelled') cancel(raw);
    const params = plainCall(raw);
    if (params === undefined) return sdk(message);
    answer(raw.id as RequestId, params);
  };

  return {
    get taken() {
      return taken;
    },
    close() {
      for (const controller of inFlight.values()) controller.abort(new Error('Connection closed'));
      inFlight.clear();
    },
  };
}
