/**
 * @module gateway/completion-handlers
 * `completion/complete` (issue #12), forwarded to the plugin that owns the reference: a
 * `ref/prompt` by the prompt's name as the session sees it (`plugin__prompt` or, with native
 * names, the plugin's own), a `ref/resource` by a template or resource URI as the session sees
 * it. The reference reaches the plugin in its own terms; the answer comes back unchanged.
 * Declared as the `completions` capability only when the backend forwards it.
 */
import { CompleteRequestSchema, ErrorCode, McpError, type CompleteRequest, type CompleteResult } from '@modelcontextprotocol/sdk/types.js';
import { clientLinkFor } from './client-forwarding.ts';
import { requestFailure } from './errors.ts';
import { parsePromptName, parseResourceUri } from './meta-tools.ts';
import { prefixedPromptName } from './native-names.ts';
import { sessionResourceAddressing, templateNaming, type PluginResource } from './resource-addressing.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

type Reference = CompleteRequest['params']['ref'];

/** The plugin and its own name or URI for a reference as the session sees it. */
async function pluginReference(core: GatewayCore, state: SessionState, ref: Reference): Promise<{ pluginName: string; ref: Reference } | undefined> {
  if (ref.type === 'ref/prompt') {
    const target = parsePromptName(await prefixedPromptName(core, state, ref.name));
    return target && { pluginName: target.pluginName, ref: { ...ref, name: target.name } };
  }
  let target: PluginResource | undefined;
  if (state.nativeNames && core.backend.listResourceTemplates) {
    const native = templateNaming(await core.backend.listResourceTemplates(state.backendSession)).byNative.get(ref.uri);
    if (native !== undefined) target = parseResourceUri(native);
  }
  target ??= (await sessionResourceAddressing(core, state)).resolve(ref.uri);
  return target && { pluginName: target.pluginName, ref: { ...ref, uri: target.uri } };
}

/** Installs `completion/complete` and declares `completions` when the backend forwards it. */
export function installCompletionHandler(core: GatewayCore, state: SessionState): void {
  if (!core.backend.complete) return;
  state.server.registerCapabilities({ completions: {} });
  state.server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    // Issue #12: the plugin's requests while it completes go to this session's client.
    answerComplete(core, state, request.params, extra.signal, clientLinkFor(state, extra)),
  );
}

/** `completion/complete` for a session (either era, issue #24); `client`: the session's client link, if any. */
export async function answerComplete(
  core: GatewayCore,
  state: SessionState,
  params: CompleteRequest['params'],
  signal: AbortSignal,
  client?: ReturnType<typeof clientLinkFor>,
): Promise<CompleteResult> {
  const complete = core.backend.complete?.bind(core.backend);
  if (!complete) throw new McpError(ErrorCode.MethodNotFound, 'completion/complete is not offered');
  core.registry.touch(state.id);
  const { ref } = params;
  const target = await pluginReference(core, state, ref);
  if (!target) throw new McpError(ErrorCode.InvalidParams, ref.type === 'ref/prompt' ? `Unknown prompt: ${ref.name}` : `Unknown resource template: ${ref.uri}`);
  try {
    return await complete(state.backendSession, target.pluginName, { ...params, ref: target.ref }, { signal, ...(client ? { client } : {}) });
  } catch (error) {
    throw requestFailure('completion/complete', error, core.logger);
  }
}
