/**
 * @module gateway/resource-addressing
 * How a session addresses plugin resources (issue #12). Quiver's form is
 * `quiver://<plugin>/<encoded plugin URI>` (`meta-tools.ts`); a resource template gets the same
 * form with its `{…}` expressions left as they are, so a client expanding Quiver's template
 * gets exactly Quiver's URI of the resource the plugin's template would give (for values
 * without reserved characters; a `{id}` value `a/b` reaches the plugin decoded once, as
 * `a/b`). With native names, a resource or template only one plugin serves is shown under the
 * plugin's own URI, and a URI made from such a template is read from that plugin.
 *
 * `sessionResourceAddressing` is the one place that turns a session's URI into (plugin, URI)
 * and back: reads, subscriptions, update notifications and URIs inside results use it.
 */
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { nativeNaming, type NativeNaming } from '../core/native-names.ts';
import type { AggregatedList } from './backend.ts';
import { formatResourceUri, parseResourceUri } from './meta-tools.ts';
import { resourceNaming } from './native-names.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

/** A plugin's resource in the plugin's own terms. */
export interface PluginResource {
  pluginName: string;
  uri: string;
}

/** A session's view of resource URIs. */
export interface ResourceAddressing {
  /** The URI the session is shown for a plugin's resource URI. */
  show(pluginName: string, uri: string): string;
  /** The plugin and its own URI for a URI the session uses; undefined when it names nothing. */
  resolve(uri: string): PluginResource | undefined;
}

/** Quiver's form of a plugin's URI template: literal parts encoded, expressions kept. */
export function formatTemplateUri(pluginName: string, uriTemplate: string): string {
  const encoded = uriTemplate
    .split(/(\{[^}]*\})/)
    .map((part) => (part.startsWith('{') && part.endsWith('}') ? part : encodeURIComponent(part)))
    .join('');
  return `quiver://${pluginName}/${encoded}`;
}

/** The naming of templates by their URI template (native only where one plugin serves it). */
export function templateNaming(listed: AggregatedList<ResourceTemplate>): NativeNaming {
  return nativeNaming(listed.items.map(({ pluginName, item }) => ({ pluginName, name: item.uriTemplate, prefixed: formatTemplateUri(pluginName, item.uriTemplate) })));
}

const prefixedAddressing: ResourceAddressing = {
  show: formatResourceUri,
  resolve: parseResourceUri,
};

/** Templates a plugin serves under their own names, compiled once per addressing. */
interface NativeTemplate {
  pluginName: string;
  template: UriTemplate;
}

function compile(uriTemplate: string): UriTemplate | undefined {
  try {
    return new UriTemplate(uriTemplate);
  } catch {
    return undefined; // a malformed template matches nothing
  }
}

/** Builds the addressing from what the session can see (pure, for tests and callers with lists). */
export function addressingFrom(resources: AggregatedList<Resource>, templates: AggregatedList<ResourceTemplate>): ResourceAddressing {
  const naming = resourceNaming(resources);
  const byTemplate = templateNaming(templates);
  const natives: NativeTemplate[] = [];
  for (const { pluginName, item } of templates.items) {
    if (!byTemplate.byNative.has(item.uriTemplate)) continue;
    const template = compile(item.uriTemplate);
    if (template) natives.push({ pluginName, template });
  }
  /** The one plugin whose native template makes `uri`; undefined when none or several do. */
  const templateOwner = (uri: string): string | undefined => {
    const owners = new Set(natives.filter((native) => native.template.match(uri) !== null).map((native) => native.pluginName));
    return owners.size === 1 ? [...owners][0] : undefined;
  };
  return {
    show(pluginName, uri) {
      const prefixed = formatResourceUri(pluginName, uri);
      const listed = naming.shown.get(prefixed);
      if (listed !== undefined) return listed;
      // Not a listed resource: native when it is made from this plugin's native template and no listed resource already uses the name.
      return !naming.byNative.has(uri) && templateOwner(uri) === pluginName ? uri : prefixed;
    },
    resolve(uri) {
      const listed = naming.byNative.get(uri);
      if (listed !== undefined) return parseResourceUri(listed);
      const prefixed = parseResourceUri(uri);
      if (prefixed) return prefixed;
      const owner = templateOwner(uri);
      return owner === undefined ? undefined : { pluginName: owner, uri };
    },
  };
}

/** The session's addressing: Quiver's form, or with native names what its plugins serve now. */
export async function sessionResourceAddressing(core: GatewayCore, state: SessionState): Promise<ResourceAddressing> {
  if (!state.nativeNames) return prefixedAddressing;
  const { backend } = core;
  const [resources, templates] = await Promise.all([
    backend.listResources(state.backendSession),
    backend.listResourceTemplates ? backend.listResourceTemplates(state.backendSession) : Promise.resolve({ items: [], warnings: [] }),
  ]);
  return addressingFrom(resources, templates);
}
