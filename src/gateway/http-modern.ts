/**
 * @module gateway/http-modern
 * Issue #24: the `/mcp` front for 2026-07-28 requests. A request without a session id that
 * carries the 2026-07-28 `_meta` envelope is answered statelessly by the SDK v2 entry
 * (`createMcpHandler`, strict modern) on a per-request server from `Gateway.modernServer`: no
 * session is created and no session id is sent. Under the same pacing and overload answers as
 * the session front; a catalog change reaches the clients' `subscriptions/listen` streams. The SDK
 * entry is made with the first such request (issue #28: an idle server does not load the v2 SDK).
 */
import type { McpHttpHandler as ModernHttpHandler } from '@modelcontextprotocol/server';
import type { Logger } from '../core/logger.ts';
import { runWithForwardedHeaders } from '../core/forwarded-headers.ts';
import { observeMcpExchange, type McpRequestObserver } from '../telemetry/index.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway } from './gateway.ts';
import { jsonRpcError, overloadAnswerOrThrow, overloadedResponse } from './http-answers.ts';
import type { HeaderTarget } from './mcp-headers.ts';
import { CALL_TOOL } from './meta-tools.ts';
import { routeRetry, type ReplicaForwarding } from './replica-forward.ts';
import { modernSdk } from './sdk-servers.ts';

/** Waits for a POST's turn (the handler's pacing); an overload answer when too many wait. */
export type PostTurn = () => Promise<Response | undefined>;

export interface ModernFront {
  /** Answers one 2026-07-28 request, counted under its header method. */
  serve(request: Request, identity: SessionIdentity, target: HeaderTarget | undefined): Promise<Response>;
  close(): Promise<void>;
}

export function createModernFront(input: {
  gateway: Gateway;
  logger: Logger;
  maxBodyBytes: number;
  enableJsonResponse: boolean;
  turn: PostTurn;
  observer?: McpRequestObserver;
  replicas?: ReplicaForwarding;
}): ModernFront {
  const { gateway, logger } = input;
  // The identity travels to the per-request factory through the entry's pass-through authInfo.
  let entry: Promise<ModernHttpHandler> | undefined;
  let made: ModernHttpHandler | undefined;
  function modernEntry(): Promise<ModernHttpHandler> {
    entry ??= modernSdk().then(({ createMcpHandler }) =>
      (made = createMcpHandler((context) => gateway.modernServer((context.authInfo?.extra as { identity: SessionIdentity }).identity), {
        legacy: 'reject',
        maxRequestBodySize: input.maxBodyBytes,
        responseMode: input.enableJsonResponse ? 'json' : 'auto',
        onerror: (error) => logger.debug({ err: error }, '2026-07-28 request refused or failed'),
      })),
    );
    return entry;
  }
  // The hint carries no data, so every stream gets it; each client then lists its own tools.
  // Before the first 2026-07-28 request there is no entry and so no stream to tell.
  const stopListsChanged = gateway.onListsChanged(() => {
    made?.notify.toolsChanged();
    made?.notify.promptsChanged();
    made?.notify.resourcesChanged();
  });

  async function answer(request: Request, identity: SessionIdentity, target: HeaderTarget | undefined): Promise<Response> {
    if (request.method === 'POST' && gateway.saturated) return overloadedResponse('Quiver is overloaded; retry shortly', 1);
    if (request.method === 'POST') {
      const overloadedNow = await input.turn();
      if (overloadedNow) return overloadedNow;
    }
    const mismatch = await toolNameHeaderMismatch(request);
    if (mismatch) return mismatch;
    if (input.replicas && request.method === 'POST') {
      const routed = await routeRetry(input.replicas, gateway, request, identity);
      if (routed) return routed;
    }
    const modern = await modernEntry();
    try {
      // The plugin calls this request makes carry the client's Mcp-Param-* headers (HTTP plugins).
      return await runWithForwardedHeaders(target?.forwarded ?? {}, () => modern.fetch(request, { authInfo: { token: '', clientId: 'quiver', scopes: [], extra: { identity } } }));
    } catch (error) {
      return overloadAnswerOrThrow(error);
    }
  }

  return {
    async serve(request, identity, target) {
      const started = performance.now();
      const response = await answer(request, identity, target);
      if (input.observer && target) observeMcpExchange(input.observer, { method: target.method, toolName: target.name, seconds: (performance.now() - started) / 1000, status: response.status });
      return response;
    },
    async close() {
      stopListsChanged();
      await (await entry?.catch(() => undefined))?.close();
    },
  };
}

/**
 * `call_tool` declares its `name` as the header parameter `Tool-Name` for 2026-07-28 clients
 * (SEP-2243, `modern-server.ts`); the SDK entry checks declarations of the tools it registered
 * itself only, so Quiver checks this one: a header that disagrees with the body is 400 / -32020.
 */
async function toolNameHeaderMismatch(request: Request): Promise<Response | undefined> {
  const header = request.headers.get('mcp-param-tool-name');
  if (header === null) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(await request.clone().text()) as unknown;
  } catch {
    return undefined; // the SDK entry answers a malformed body
  }
  const params = (body as { method?: unknown; params?: { name?: unknown; arguments?: { name?: unknown } } } | null)?.params;
  if ((body as { method?: unknown } | null)?.method !== 'tools/call' || params?.name !== CALL_TOOL) return undefined;
  if (params.arguments?.name === header) return undefined;
  return jsonRpcError(400, -32020, `Header mismatch: Mcp-Param-Tool-Name '${header}' does not match the call_tool argument name`);
}
