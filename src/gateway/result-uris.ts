/**
 * @module gateway/result-uris
 * Resource URIs inside results (issue #12): a tool result's `resource_link` items and embedded
 * `resource` items, and a prompt's embedded resources, carry the plugin's own URIs. They are
 * rewritten to the address the session reads them by (`resource-addressing.ts`), so
 * `resources/read` of what a tool pointed to reaches the plugin that pointed to it. Results
 * without such items are returned as they are, without asking the backend anything.
 */
import type { CallToolResult, GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { sessionResourceAddressing, type ResourceAddressing } from './resource-addressing.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

type ContentItem = CallToolResult['content'][number];

const carriesUri = (item: ContentItem): boolean => item.type === 'resource_link' || item.type === 'resource';

/** One content item with its resource URI shown for the session (other items unchanged). */
export function showContentUri(item: ContentItem, pluginName: string, addressing: ResourceAddressing): ContentItem {
  if (item.type === 'resource_link') return { ...item, uri: addressing.show(pluginName, item.uri) };
  if (item.type === 'resource') return { ...item, resource: { ...item.resource, uri: addressing.show(pluginName, item.resource.uri) } };
  return item;
}

/** A tool result with its resource URIs rewritten (the same object when it has none). */
export async function showToolResultUris(core: GatewayCore, state: SessionState, pluginName: string, result: CallToolResult): Promise<CallToolResult> {
  if (!pluginName || !Array.isArray(result.content) || !result.content.some(carriesUri)) return result;
  try {
    const addressing = await sessionResourceAddressing(core, state);
    return { ...result, content: result.content.map((item) => showContentUri(item, pluginName, addressing)) };
  } catch (error) {
    // The call succeeded: a failure to learn the session's addressing must not fail it (fail open).
    core.logger.warn({ err: error, sessionId: state.id }, 'rewriting resource URIs in a tool result failed');
    return result;
  }
}

/** A prompt's messages with their embedded resources' URIs rewritten (the same object when none). */
export async function showPromptResultUris(core: GatewayCore, state: SessionState, pluginName: string, result: GetPromptResult): Promise<GetPromptResult> {
  if (!result.messages.some((message) => carriesUri(message.content as ContentItem))) return result;
  const addressing = await sessionResourceAddressing(core, state);
  return { ...result, messages: result.messages.map((message) => ({ ...message, content: showContentUri(message.content as ContentItem, pluginName, addressing) as typeof message.content })) };
}
