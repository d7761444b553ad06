/**
 * @module gateway/client-forwarding
 * Issue #12 "Forwarding", the gateway's half: a session declares `logging` and keeps its own
 * `logging/setLevel`; each `tools/call` hands the backend a `ClientLink` (the plugin's
 * sampling, elicitation and roots requests and its log messages go to this client, on this
 * request's stream, so over Streamable HTTP they travel with the call) and, when the client
 * sent `_meta.progressToken`, a progress callback that answers under the client's own token;
 * so do `resources/read` and `prompts/get` (and `completion/complete` gets the link).
 * Which session a plugin message belongs to is the backend's decision (runtime
 * `supervisor/session-routing.ts`); a roots change is passed on to the backend.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  type CallToolRequest,
  type GetPromptRequest,
  type LoggingLevel,
  type ReadResourceRequest,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { BackendCallOptions, ClientLink } from './backend.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

/** How long a plugin's request waits on the client's answer (a person may be filling a form). */
export const CLIENT_ANSWER_TIMEOUT_MS = 600_000;

const levels = new WeakMap<SessionState, LoggingLevel>();

/** The level a session asked for with `logging/setLevel`, if any. */
export function sessionLogLevel(state: SessionState): LoggingLevel | undefined {
  return levels.get(state);
}

/** Sets a session's level as `logging/setLevel` would (a stored session restored on another replica). */
export function setSessionLogLevel(state: SessionState, level: LoggingLevel | undefined): void {
  if (level === undefined) levels.delete(state);
  else levels.set(state, level);
}

/** Declares `logging` and installs `logging/setLevel` and the roots change handler (before connect). */
export function installForwarding(core: GatewayCore, state: SessionState): void {
  const { server } = state;
  server.registerCapabilities({ logging: {} });
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    core.registry.touch(state.id);
    levels.set(state, request.params.level);
    return {};
  });
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    try {
      await core.backend.rootsChanged?.(state.backendSession);
    } catch (error) {
      core.logger.debug({ err: error, sessionId: state.id }, 'forwarding roots/list_changed failed');
    }
  });
}

type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The result schema Quiver validates a client's answer with, per forwarded method. */
function resultSchemaFor(request: Parameters<ClientLink['request']>[0]) {
  if (request.method === 'elicitation/create') return ElicitResultSchema;
  if (request.method === 'roots/list') return ListRootsResultSchema;
  const params = request.params ?? {};
  return params['tools'] !== undefined || params['toolChoice'] !== undefined ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema;
}

/** The client of this session, for one call: requests and log messages travel on the call's stream. */
export function clientLinkFor(state: SessionState, extra: CallExtra): ClientLink {
  const declared = state.server.getClientCapabilities() ?? {};
  return {
    sessionId: state.id,
    capabilities: {
      ...(declared.sampling ? { sampling: declared.sampling } : {}),
      ...(declared.elicitation ? { elicitation: declared.elicitation } : {}),
      ...(declared.roots ? { roots: declared.roots } : {}),
    },
    logLevel: () => levels.get(state),
    async request(request, options) {
      const result = await extra.sendRequest({ method: request.method, params: request.params ?? {} } as ServerRequest, resultSchemaFor(request), {
        signal: options.signal,
        timeout: CLIENT_ANSWER_TIMEOUT_MS,
      });
      return result as Record<string, unknown>;
    },
    async notify(notification) {
      if (notification.method !== 'notifications/elicitation/complete') return extra.sendNotification(notification);
      // A URL elicitation may complete after the call that asked ended: over HTTP its stream is
      // then gone, and the completion goes on the session's own stream (stdio has just one).
      try {
        await extra.sendNotification(notification);
      } catch {
        await state.server.notification(notification);
      }
    },
  };
}

/** A request that may carry the client's progress token (`tools/call`, `resources/read`, `prompts/get`). */
type ProgressCarrier = Pick<CallToolRequest | ReadResourceRequest | GetPromptRequest, 'params'>;

/** The forwarding options of one request: the client link, and progress when the client asked for it. */
export function forwardingFor(state: SessionState, request: ProgressCarrier, extra: CallExtra): BackendCallOptions {
  const token = request.params._meta?.progressToken;
  const client = clientLinkFor(state, extra);
  if (token === undefined) return { client };
  return {
    client,
    onProgress: (progress) => {
      // The plugin saw a token of Quiver's own; the client gets its own back.
      void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(() => undefined);
    },
  };
}
