/**
 * @module gateway/request-handlers
 * Installs a session's MCP request handlers: `tools/list` and `tools/call` (meta-tools of
 * the session's mode run under the admission bounds; any other name is a plugin tool), and
 * resources and prompts passed through to the backend under namespaced URIs and names, and
 * the forwarding of logging, progress and client requests (`client-forwarding`, issue #12).
 * Every request marks the session active.
 */
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { BackendCallOptions } from './backend.ts';
import { forwardingFor, installForwarding } from './client-forwarding.ts';
import { sessionCapabilities, type CallerCapabilities } from './client-requirements.ts';
import { overloadedRequest, requestFailure, toolCallFailure } from './errors.ts';
import { isMetaToolOf, listTools } from './listed-tools.ts';
import { listCapabilities, loadCapability, searchTools } from './meta-tool-handlers.ts';
import { installCompletionHandler } from './completion-handlers.ts';
import { LIST_CAPABILITIES, LOAD_CAPABILITY, META_TOOL_NAMES, SEARCH_TOOLS, parsePromptName } from './meta-tools.ts';
import { prefixedPromptName, showPrompts, showResources } from './native-names.ts';
import { sessionResourceAddressing } from './resource-addressing.ts';
import { installSubscriptionHandlers } from './resource-subscriptions.ts';
import { installTemplateHandler } from './resource-templates.ts';
import { showPromptResultUris } from './result-uris.ts';
import { createToolTask, installTaskHandlers } from './task-handlers.ts';
import { pageOf } from './list-pages.ts';
import type { GatewayCore, SendNotification, SessionState } from './session-state.ts';
import { callThroughCallTool, proxyCall } from './tool-proxy.ts';

/** Installs every request handler of a session's server. */
export function installRequestHandlers(core: GatewayCore, state: SessionState): void {
  installForwarding(core, state);
  installToolHandlers(core, state);
  installResourceHandlers(core, state);
  installPromptHandlers(core, state);
  // Issue #12: templates, completion, subscriptions and tasks (each declared only when forwarded).
  installTemplateHandler(core, state);
  installCompletionHandler(core, state);
  installSubscriptionHandlers(core, state);
  installTaskHandlers(core, state);
}

/** Runs the gateway's own work under the admission bounds; a refusal becomes a clear JSON-RPC error. */
async function admitted<T>(core: GatewayCore, work: () => Promise<T>): Promise<T> {
  try {
    return await core.admission.run(work);
  } catch (error) {
    throw overloadedRequest(error);
  }
}

function installToolHandlers(core: GatewayCore, state: SessionState): void {
  state.server.setRequestHandler(ListToolsRequestSchema, (request) => answerListTools(core, state, request.params?.cursor));
  state.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    answerCallTool(core, state, request.params, extra.signal, (notification) => extra.sendNotification(notification), forwardingFor(state, request, extra)),
  );
}

/**
 * `tools/list` for a session (either era: the 2026-07-28 server calls it too, issue #24), for a
 * caller that declared `caller` (default: the 2025 session's client).
 */
export async function answerListTools(core: GatewayCore, state: SessionState, cursor?: string, caller: CallerCapabilities = sessionCapabilities(state)): Promise<{ tools: Tool[]; nextCursor?: string }> {
  core.registry.touch(state.id);
  let tools: Tool[];
  try {
    tools = await listTools(core, state, caller);
  } catch (error) {
    throw requestFailure('tools/list', error, core.logger);
  }
  // Issue #24: a long list comes in pages; a bad cursor is the caller's mistake (-32602).
  const page = pageOf(tools, cursor, core.settings.toolsPageSize);
  return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

/**
 * `tools/call` for a session: a meta-tool of its mode, a task-augmented call, or a plugin tool,
 * for a caller that declared `caller` (default: the 2025 session's client; issue #24).
 */
export async function answerCallTool(
  core: GatewayCore,
  state: SessionState,
  params: { name: string; arguments?: Record<string, unknown> | undefined; task?: CallToolRequest['params']['task'] },
  signal: AbortSignal,
  send: SendNotification,
  forward?: BackendCallOptions,
  caller: CallerCapabilities = sessionCapabilities(state),
): Promise<CallToolResult | CreateTaskResult> {
  core.registry.touch(state.id);
  const { name } = params;
  try {
    if (META_TOOL_NAMES.has(name) && isMetaToolOf(state.mode, name)) {
      if (name === SEARCH_TOOLS) return await admitted(core, () => searchTools(core, state, params.arguments, send, caller));
      if (name === LIST_CAPABILITIES) return await admitted(core, () => listCapabilities(core, state, caller));
      if (name === LOAD_CAPABILITY) return await admitted(core, () => loadCapability(core, state, params.arguments, send, caller));
      return await callThroughCallTool(core, state, params.arguments, signal, send, caller, forward);
    }
    // Issue #12: a task-augmented call creates the plugin's task (task-handlers.ts).
    if (params.task) return await createToolTask(core, state, name, params.arguments, params.task, signal, send, caller);
    return await proxyCall(core, state, name, params.arguments, signal, send, { caller, ...(forward ? { forward } : {}) });
  } catch (error) {
    if (error instanceof McpError) throw error;
    return toolCallFailure(name, error, core.logger);
  }
}

function installResourceHandlers(core: GatewayCore, state: SessionState): void {
  state.server.setRequestHandler(ListResourcesRequestSchema, () => answerListResources(core, state));
  state.server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    answerReadResource(core, state, request.params.uri, extra.signal, forwardingFor(state, request, extra)),
  );
}

/** `resources/list` for a session, under namespaced (or native) URIs. */
export async function answerListResources(core: GatewayCore, state: SessionState): Promise<{ resources: Resource[] }> {
  core.registry.touch(state.id);
  try {
    const listed = await core.backend.listResources(state.backendSession);
    for (const warning of listed.warnings) core.logger.debug({ sessionId: state.id, warning }, 'resources degraded');
    return { resources: showResources(state, listed) };
  } catch (error) {
    throw requestFailure('resources/list', error, core.logger);
  }
}

/** `resources/read` for a session: the plugin's resource behind a shown URI. */
export async function answerReadResource(core: GatewayCore, state: SessionState, uri: string, signal: AbortSignal, forward?: BackendCallOptions): Promise<ReadResourceResult> {
  core.registry.touch(state.id);
  // Issue #12: a native URI (listed, or made from a plugin's native template) is read, and answered, as such.
  const addressing = await sessionResourceAddressing(core, state);
  const target = addressing.resolve(uri);
  if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
  try {
    const result = await core.backend.readResource(state.backendSession, target.pluginName, target.uri, { signal, ...forward });
    return { ...result, contents: result.contents.map((content) => ({ ...content, uri: addressing.show(target.pluginName, content.uri) })) };
  } catch (error) {
    throw requestFailure(`resource ${uri}`, error, core.logger);
  }
}

function installPromptHandlers(core: GatewayCore, state: SessionState): void {
  state.server.setRequestHandler(ListPromptsRequestSchema, () => answerListPrompts(core, state));
  state.server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    answerGetPrompt(core, state, request.params.name, request.params.arguments ?? {}, extra.signal, forwardingFor(state, request, extra)),
  );
}

/** `prompts/list` for a session, under namespaced (or native) names. */
export async function answerListPrompts(core: GatewayCore, state: SessionState): Promise<{ prompts: Prompt[] }> {
  core.registry.touch(state.id);
  try {
    const listed = await core.backend.listPrompts(state.backendSession);
    for (const warning of listed.warnings) core.logger.debug({ sessionId: state.id, warning }, 'prompts degraded');
    return { prompts: showPrompts(state, listed) };
  } catch (error) {
    throw requestFailure('prompts/list', error, core.logger);
  }
}

/** `prompts/get` for a session: the plugin's prompt behind a shown name. */
export async function answerGetPrompt(
  core: GatewayCore,
  state: SessionState,
  name: string,
  args: Record<string, string>,
  signal: AbortSignal,
  forward?: BackendCallOptions,
): Promise<GetPromptResult> {
  core.registry.touch(state.id);
  const target = parsePromptName(await prefixedPromptName(core, state, name));
  if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  try {
    const result = await core.backend.getPrompt(state.backendSession, target.pluginName, target.name, args, { signal, ...forward });
    return await showPromptResultUris(core, state, target.pluginName, result);
  } catch (error) {
    throw requestFailure(`prompt ${name}`, error, core.logger);
  }
}
