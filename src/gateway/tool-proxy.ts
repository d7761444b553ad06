/**
 * @module gateway/tool-proxy
 * A plugin tool call through the gateway, directly or through `call_tool`: resolve the tool
 * the session may call right now, validate its arguments, call the backend, report the call
 * and the search outcome, then let the iteration guard act (seed 004 §7): a loop evicts and
 * suspends the tool and appends guidance to the result.
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { jsonSafetyCheck } from '../core/validation.ts';
import type { BackendCallOptions, GatewayTool } from './backend.ts';
import { lacksCapabilitiesError, missingCapabilities, type CallerCapabilities } from './client-requirements.ts';
import { toolCallFailure, unknownToolError } from './errors.ts';
import { loopGuidance } from './iteration-guard.ts';
import { isAppTool } from './mcp-apps.ts';
import { notifyToolsChanged } from './listed-tools.ts';
import { CALL_TOOL, META_TOOL_NAMES } from './meta-tools.ts';
import { prefixedToolName } from './native-names.ts';
import { showToolResultUris } from './result-uris.ts';
import { recordCall, type GatewayCore, type SendNotification, type SessionState } from './session-state.ts';

// A plugin's own arguments may carry NUL text, not 5,000 levels of nesting (issue #18, finding 7).
const callToolArgumentsSchema = z.object({
  name: z.string().min(1).max(1000).superRefine(jsonSafetyCheck()),
  arguments: z.record(z.string(), z.unknown()).superRefine(jsonSafetyCheck({ allowNul: true })).optional(),
});

/** `call_tool`: parses its arguments and proxies the named plugin tool (never a meta-tool). */
export async function callThroughCallTool(
  core: GatewayCore,
  state: SessionState,
  rawArguments: unknown,
  signal: AbortSignal,
  send: SendNotification,
  caller: CallerCapabilities,
  forward?: BackendCallOptions,
): Promise<CallToolResult> {
  const parsed = callToolArgumentsSchema.safeParse(rawArguments ?? {});
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${CALL_TOOL}: name (string) and arguments (object) expected`);
  if (META_TOOL_NAMES.has(parsed.data.name)) throw new McpError(ErrorCode.InvalidParams, `${CALL_TOOL} runs plugin tools, not ${parsed.data.name}; call it directly`);
  return proxyCall(core, state, parsed.data.name, parsed.data.arguments, signal, send, { bindVisible: true, caller, ...(forward ? { forward } : {}) });
}

/**
 * Resolves a tool the session may call right now, or throws InvalidParams. With `bindVisible`
 * (`call_tool`), a tool the identity may see but the session has not bound is bound on the
 * way (issue #12: clients that open a session per call, like the MCP Inspector CLI); the
 * backend's `getTool` is the same visibility decision search makes, and a tool it hides is
 * refused exactly as one that does not exist. A tool that needs a client capability the caller
 * did not declare is refused as unknown too, saying which (issue #24, `client-requirements.ts`).
 */
export async function resolveCallable(core: GatewayCore, state: SessionState, name: string, bindVisible: boolean, send: SendNotification, caller: CallerCapabilities): Promise<GatewayTool> {
  const tool = await resolveVisible(core, state, name, bindVisible, send, caller);
  const missing = missingCapabilities(tool, caller);
  if (missing.length > 0) throw lacksCapabilitiesError(name, missing);
  return tool;
}

async function resolveVisible(core: GatewayCore, state: SessionState, name: string, bindVisible: boolean, send: SendNotification, caller: CallerCapabilities): Promise<GatewayTool> {
  const { backend } = core;
  if (state.mode === 'all') {
    const tool = await backend.getTool(state.backendSession, name);
    if (!tool || tool.visibility === 'silent') throw unknownToolError(name);
    return tool;
  }
  const how = state.mode === 'capabilities' ? 'call load_capability for its plugin' : 'call search_tools to find it';
  if (state.suspended.has(name)) throw unknownToolError(name, `It was removed from your tool list after repeated identical calls; ${how} if you still need it`);
  const bound = state.context.get(name);
  if (bound) return bound;
  const exists = await backend.getTool(state.backendSession, name);
  if (!exists || exists.visibility === 'silent') throw unknownToolError(name);
  // Issue #24: the still surface binds nothing; any tool the identity may see is callable.
  if (state.mode === 'still') return exists;
  // MCP Apps: an app calls its own tools through the host; the model never searched for them.
  // Callable as any visible tool is, without joining the session's list.
  if (isAppTool(exists._meta)) return exists;
  if (!bindVisible) throw unknownToolError(name, `It is not in this session's tool list; ${how} first`);
  // Not bound (and the list left as it is) for a caller that may not use it: refused by the caller.
  if (missingCapabilities(exists, caller).length > 0) return exists;
  if (state.context.bind([exists]).added.length > 0) await notifyToolsChanged(core, send, state);
  return exists;
}

/** Calls a plugin tool for the session, reports it, and applies the iteration guard. */
export async function proxyCall(
  core: GatewayCore,
  state: SessionState,
  name: string,
  rawArguments: Record<string, unknown> | undefined,
  signal: AbortSignal,
  send: SendNotification,
  options: { bindVisible?: boolean; forward?: BackendCallOptions; caller: CallerCapabilities },
): Promise<CallToolResult> {
  const { backend, logger, settings } = core;
  // Issue #12: a native name becomes the prefixed one here, before the guard or the backend sees it.
  name = await prefixedToolName(core, state, name);
  const tool = await resolveCallable(core, state, name, options.bindVisible === true, send, options.caller);
  const args = rawArguments ?? {};
  const validation = await core.validators.validate(tool, args);
  if (validation) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${validation}`);

  const started = performance.now();
  let result: CallToolResult;
  let errorCode: string | undefined;
  try {
    // Issue #12: the session's client link and progress relay ride along (client-forwarding.ts).
    const answered = await backend.callTool(state.backendSession, name, args, { ...options.forward, signal });
    // Issue #12: URIs a tool points to are given in the form the session reads them by.
    result = await showToolResultUris(core, state, tool.pluginName, answered);
  } catch (error) {
    errorCode = (error as { code?: unknown }).code === undefined ? 'internal' : String((error as { code?: unknown }).code);
    recordCall(core, state, name, false, started, errorCode);
    result = toolCallFailure(name, error, logger); // throws for caller mistakes and bugs
  }
  const success = result.isError !== true;
  if (errorCode === undefined) recordCall(core, state, name, success, started);
  state.openEvent?.calls.push({ name, success });
  state.context.touch(name);

  // §7.1: the call has run; only now may the guard act.
  const verdict = state.guard.record(name, args);
  if (!verdict.loop) return result;
  // A looping call says nothing good about the search that offered it (issue #13).
  if (state.openEvent) (state.openEvent.flagged ??= new Set()).add(name);
  if (state.mode === 'still') state.suspended.add(name); // refused until the next search; the list stays
  else if (state.mode !== 'all') {
    state.context.evict(name);
    state.suspended.add(name);
    await notifyToolsChanged(core, send, state);
  }
  logger.info({ sessionId: state.id, tool: name, reason: verdict.reason, count: verdict.count }, 'loop detected: tool evicted');
  const text = loopGuidance({ toolName: name, verdict, windowMs: settings.guardOptions.windowMs, mode: state.mode, specific: settings.specificGuidance[name] });
  return { ...result, content: [...(result.content ?? []), { type: 'text', text }] };
}
