/**
 * @module rollouts/surface
 * What a canary serves besides tools (issue #29): the resources, resource templates and prompts
 * it declares exactly as the active slot does (same URI or name, title, description, MIME type,
 * arguments, annotations). Only these are routed to it, like tools: a session reads and prompts
 * the version its bucket gives it, and nothing new or changed appears before promotion (the
 * lists a session sees stay the active version's). Their contents may differ: that is the change
 * the canary brings, and what the judge watches on tools.
 */
import type { Supervisor } from '../runtime/supervisor.ts';
import type { UpstreamSpec } from '../runtime/types.ts';
import type { RoutableSurface } from './types.ts';

type Lister = Pick<Supervisor, 'listResources' | 'listResourceTemplates' | 'listPrompts'>;
type Item = Record<string, unknown>;

const resourceKey = (item: Item) => JSON.stringify([item['uri'], item['name'], item['title'] ?? null, item['description'] ?? null, item['mimeType'] ?? null, item['annotations'] ?? null]);
const templateKey = (item: Item) => JSON.stringify([item['uriTemplate'], item['name'], item['title'] ?? null, item['description'] ?? null, item['mimeType'] ?? null, item['annotations'] ?? null]);
const promptKey = (item: Item) => JSON.stringify([item['name'], item['title'] ?? null, item['description'] ?? null, item['arguments'] ?? null]);

/** A listing, or nothing when the plugin does not offer that kind (or the listing fails: then nothing is routed). */
async function listed(list: () => Promise<unknown[]>): Promise<Item[]> {
  try {
    return (await list()) as Item[];
  } catch {
    return [];
  }
}

/** Identifiers of the canary's items declared exactly as the stable slot declares them. */
function alike(stable: Item[], canary: Item[], key: (item: Item) => string, id: string): string[] {
  const declared = new Set(stable.map(key));
  return canary.filter((item) => declared.has(key(item))).map((item) => String(item[id]));
}

/** Lists both slots (the canary's process is started) and keeps what both declare alike. */
export async function routableSurface(supervisor: Lister, stable: UpstreamSpec, canary: UpstreamSpec): Promise<RoutableSurface> {
  const [stableResources, canaryResources, stableTemplates, canaryTemplates, stablePrompts, canaryPrompts] = await Promise.all([
    listed(() => supervisor.listResources(stable)),
    listed(() => supervisor.listResources(canary)),
    listed(() => supervisor.listResourceTemplates(stable)),
    listed(() => supervisor.listResourceTemplates(canary)),
    listed(() => supervisor.listPrompts(stable)),
    listed(() => supervisor.listPrompts(canary)),
  ]);
  return {
    resources: alike(stableResources, canaryResources, resourceKey, 'uri'),
    templates: alike(stableTemplates, canaryTemplates, templateKey, 'uriTemplate'),
    prompts: alike(stablePrompts, canaryPrompts, promptKey, 'name'),
  };
}
