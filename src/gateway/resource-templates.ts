/**
 * @module gateway/resource-templates
 * `resources/templates/list` (issue #12): every visible plugin's resource templates, in
 * Quiver's addressing (`resource-addressing.ts`: `quiver://<plugin>/<encoded literal parts>`
 * with the `{…}` expressions kept) or, with native names, under the plugin's own template
 * where no other plugin serves the same one. A URI a client makes from either form is read
 * through `resources/read` like any other resource.
 */
import { ListResourceTemplatesRequestSchema, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { requestFailure } from './errors.ts';
import { formatTemplateUri, templateNaming } from './resource-addressing.ts';
import type { AggregatedList } from './backend.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

/** Templates with their shown URI templates. */
export function showTemplates(state: SessionState, listed: AggregatedList<ResourceTemplate>): ResourceTemplate[] {
  const naming = state.nativeNames ? templateNaming(listed) : undefined;
  return listed.items.map(({ pluginName, item }) => {
    const prefixed = formatTemplateUri(pluginName, item.uriTemplate);
    return { ...item, uriTemplate: naming?.shown.get(prefixed) ?? prefixed };
  });
}

/** Installs `resources/templates/list` (empty when the backend offers no templates). */
export function installTemplateHandler(core: GatewayCore, state: SessionState): void {
  state.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => answerListTemplates(core, state));
}

/** `resources/templates/list` for a session (either era, issue #24). */
export async function answerListTemplates(core: GatewayCore, state: SessionState): Promise<{ resourceTemplates: ResourceTemplate[] }> {
  const { backend, logger } = core;
  core.registry.touch(state.id);
  if (!backend.listResourceTemplates) return { resourceTemplates: [] };
  try {
    const listed = await backend.listResourceTemplates(state.backendSession);
    for (const warning of listed.warnings) logger.debug({ sessionId: state.id, warning }, 'resource templates degraded');
    return { resourceTemplates: showTemplates(state, listed) };
  } catch (error) {
    throw requestFailure('resources/templates/list', error, logger);
  }
}
