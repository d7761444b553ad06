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
} from '@modelcontextprotocol/sdk/types.js';
import { forwardingFor, installForwarding } from './client-forwarding.ts';
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
  const { server } = state;
  const { logger } = core;

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    core.registry.touch(state.id);
    try {
      return { tools: await listTools(core, state) };
    } catch (error) {
      throw requestFailure('tools/list', error, logger);
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    const { name } = request.params;
    const send: SendNotification = (notification) => extra.sendNotification(notification);
    try {
      if (META_TOOL_NAMES.has(name) && isMetaToolOf(state.mode, name)) {
        if (name === SEARCH_TOOLS) return await admitted(core, () => searchTools(core, state, request.params.arguments, send));
        if (name === LIST_CAPABILITIES) return await admitted(core, () => listCapabilities(core, state));
        if (name === LOAD_CAPABILITY) return await admitted(core, () => loadCapability(core, state, request.params.arguments, send));
        return await callThroughCallTool(core, state, request.params.arguments, extra.signal, send, forwardingFor(state, request, extra));
      }
      // Issue #12: a task-augmented call creates the plugin's task (task-handlers.ts).
      if (request.params.task) return await createToolTask(core, state, name, request.params.arguments, request.params.task, extra.signal, send);
      return await proxyCall(core, state, name, request.params.arguments, extra.signal, send, { forward: forwardingFor(state, request, extra) });
    } catch (error) {
      if (error instanceof McpError) throw error;
      return toolCallFailure(name, error, logger);
    }
  });
}

function installResourceHandlers(core: GatewayCore, state: SessionState): void {
  const { server } = state;
  const { backend, logger } = core;

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    core.registry.touch(state.id);
    try {
      const listed = await backend.listResources(state.backendSession);
      for (const warning of listed.warnings) logger.debug({ sessionId: state.id, warning }, 'resources degraded');
      return { resources: showResources(state, listed) };
    } catch (error) {
      throw requestFailure('resources/list', error, logger);
    }
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    // Issue #12: a native URI (listed, or made from a plugin's native template) is read, and answered, as such.
    const addressing = await sessionResourceAddressing(core, state);
    const target = addressing.resolve(request.params.uri);
    if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${request.params.uri}`);
    try {
      const result = await backend.readResource(state.backendSession, target.pluginName, target.uri, { signal: extra.signal, ...forwardingFor(state, request, extra) });
      return { ...result, contents: result.contents.map((content) => ({ ...content, uri: addressing.show(target.pluginName, content.uri) })) };
    } catch (error) {
      throw requestFailure(`resource ${request.params.uri}`, error, logger);
    }
  });
}

function installPromptHandlers(core: GatewayCore, state: SessionState): void {
  const { server } = state;
  const { backend, logger } = core;

  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    core.registry.touch(state.id);
    try {
      const listed = await backend.listPrompts(state.backendSession);
      for (const warning of listed.warnings) logger.debug({ sessionId: state.id, warning }, 'prompts degraded');
      return { prompts: showPrompts(state, listed) };
    } catch (error) {
      throw requestFailure('prompts/list', error, logger);
    }
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    const target = parsePromptName(await prefixedPromptName(core, state, request.params.name));
    if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    try {
      const result = await backend.getPrompt(state.backendSession, target.pluginName, target.name, request.params.arguments ?? {}, { signal: extra.signal, ...forwardingFor(state, request, extra) });
      return await showPromptResultUris(core, state, target.pluginName, result);
    } catch (error) {
      throw requestFailure(`prompt ${request.params.name}`, error, logger);
    }
  });
}
