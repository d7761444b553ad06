/**
 * @module gateway/modern-server
 * The gateway for MCP 2026-07-28 clients (issue #24): one SDK v2 `Server` per request (the
 * revision is stateless: no `initialize`, no session id; the version, client info and
 * capabilities ride in each request's `_meta`). The v2 SDK owns the wire of that revision
 * (`server/discover`, the `_meta` envelope, `resultType`, `ttlMs` / `cacheScope`, the
 * header/body cross-checks, `-32022` with the supported versions); every handler here calls
 * the same request handlers the 2025 sessions use (`request-handlers.ts`) on the principal's
 * still state (`Gateway.principalSession`), so the two eras cannot drift apart.
 */
import { Server, type ServerCapabilities, type ServerContext } from '@modelcontextprotocol/server';
import type { CallToolRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import { requestCapabilities } from './client-requirements.ts';
import { CALL_TOOL } from './meta-tools.ts';
import {
  answerCallTool,
  answerGetPrompt,
  answerListPrompts,
  answerListResources,
  answerListTools,
  answerReadResource,
} from './request-handlers.ts';
import { answerComplete } from './completion-handlers.ts';
import { answerListTemplates } from './resource-templates.ts';
import type { GatewayCore, SendNotification, SessionState } from './session-state.ts';
import { answerWithInput } from './mrtr/input-rounds.ts';
import { TASKS_EXTENSION, answerAsTask, installModernTaskHandlers } from './modern-tasks.ts';

/**
 * Cache hints of the cacheable results (SEP-2549). Lists depend on the principal (its
 * workspace, roles and pins), so they are `private`; a short TTL lets a catalog change reach
 * the client without a `subscriptions/listen` stream.
 */
export const MODERN_CACHE_HINTS = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
  'server/discover': { ttlMs: 300_000, cacheScope: 'public' },
} as const;

/**
 * `call_tool`'s target as a header parameter (SEP-2243 `x-mcp-header`): a 2026 client sends it
 * as `Mcp-Param-Tool-Name`, so a load balancer or WAF in front of Quiver sees the real tool,
 * and the SDK entry refuses a header that disagrees with the body (`-32020`). Only for 2026
 * clients: a 2025 client's schema validator may reject the unknown keyword.
 */
export function withHeaderParameters(tool: Tool): Tool {
  if (tool.name !== CALL_TOOL) return tool;
  const properties = tool.inputSchema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties?.['name']) return tool;
  return { ...tool, inputSchema: { ...tool.inputSchema, properties: { ...properties, name: { ...properties['name'], 'x-mcp-header': 'Tool-Name' } } } };
}

/** Sends a notification related to the request being answered (progress; never a list change). */
function relatedSender(ctx: ServerContext): SendNotification {
  return async (notification) => {
    // 2026-07-28: a list never changes as a side effect of a request; the still surface sends none.
    if (notification.method.endsWith('/list_changed')) return;
    await ctx.mcpReq.notify(notification as Parameters<ServerContext['mcpReq']['notify']>[0]);
  };
}

/** A v2 SDK server answering one 2026-07-28 request on a principal's still state. */
export function createModernServer(core: GatewayCore, state: SessionState, instructions: string): Server {
  const server = new Server(core.settings.serverInfo, {
    // listChanged: catalog changes reach subscriptions/listen streams (gateway/http.ts), never a request's side effect.
    capabilities: {
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
      ...(core.backend.complete ? { completions: {} } : {}),
      // Issue #24: plugin tasks reach 2026 clients through the Tasks extension (modern-tasks.ts).
      ...(core.backend.createToolTask ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    } as ServerCapabilities,
    instructions,
    cacheHints: MODERN_CACHE_HINTS,
  });
  server.setRequestHandler('tools/list', async (request, ctx) => {
    // Issue #24: only tools the request's declared capabilities let it use (client-requirements.ts).
    const { tools, nextCursor } = await answerListTools(core, state, request.params?.cursor, requestCapabilities(ctx));
    return { tools: tools.map(withHeaderParameters), ...(nextCursor ? { nextCursor } : {}) } as never;
  });
  // Issue #24: a plugin that asks the user something pauses the call; the client gets input_required (MRTR).
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const params = request.params as CallToolRequest['params'];
    // Tasks are an extension in 2026-07-28: the server decides (a 2025 `task` field is ignored).
    const { task: _task, ...call } = params;
    const asTask = await answerAsTask(core, state, ctx, call);
    if (asTask) return asTask as never;
    return (await answerWithInput(core.inputRounds, state.id, ctx, call, (forward, signal) => answerCallTool(core, state, call, signal, relatedSender(ctx), forward, requestCapabilities(ctx)))) as never;
  });
  server.setRequestHandler('resources/list', async () => answerListResources(core, state) as never);
  server.setRequestHandler('resources/read', async (request, ctx) =>
    answerWithInput(core.inputRounds, state.id, ctx, request.params, (forward, signal) => answerReadResource(core, state, request.params.uri, signal, forward)) as never,
  );
  server.setRequestHandler('resources/templates/list', async () => answerListTemplates(core, state) as never);
  if (core.backend.complete) {
    server.setRequestHandler('completion/complete', async (request, ctx) => answerComplete(core, state, request.params as never, ctx.mcpReq.signal) as never);
  }
  server.setRequestHandler('prompts/list', async () => answerListPrompts(core, state) as never);
  server.setRequestHandler('prompts/get', async (request, ctx) =>
    answerWithInput(core.inputRounds, state.id, ctx, request.params, (forward, signal) =>
      answerGetPrompt(core, state, request.params.name, (request.params.arguments ?? {}) as Record<string, string>, signal, forward),
    ) as never,
  );
  installModernTaskHandlers(core, state, server);
  return server;
}
