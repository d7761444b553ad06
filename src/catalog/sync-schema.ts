/**
 * @module catalog/sync-schema
 * The plugin self-registration payload (seed 001 §9.1): `{pluginId, version, tools,
 * categories, pageMappings}`. `pluginId` is the plugin's kebab-case name. Tool names follow
 * core/names.ts (never `__`), and a name, category or mapping given twice is refused, so the
 * payload describes one unambiguous catalog. Unknown keys are ignored, so a plugin written
 * against a newer protocol still syncs.
 */
import { z } from 'zod';
import { pluginNameSchema } from '../core/name-schemas.ts';
import { toolInputSchema } from '../core/tool.ts';
import { categoryNameSchema } from './categories.ts';
import { pagePatternSchema } from './page-pattern.ts';

/** The most tools one sync may carry. */
export const MAX_SYNC_TOOLS = 10_000;

/** A category a plugin declares; `parent` names another payload category or a global one. */
export const syncCategorySchema = z.object({
  name: categoryNameSchema,
  displayName: z.string().min(1).max(200).optional(),
  description: z.string().max(2_000).default(''),
  parent: categoryNameSchema.optional(),
});

/** A page mapping a plugin declares; `category` names a payload category or a global one. */
export const syncPageMappingSchema = z.object({
  pagePattern: pagePatternSchema,
  category: categoryNameSchema,
  priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
});

function rejectDuplicates<T>(items: readonly T[], keyOf: (item: T) => string, path: string, field: string, what: string, context: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else context.addIssue({ code: 'custom', path: [path, index, field], message: `duplicate ${what} (first at ${path}.${first})` });
  });
}

/** The whole sync payload. */
export const syncPayloadSchema = z
  .object({
    pluginId: pluginNameSchema,
    version: z.string().min(1).max(100),
    tools: z.array(toolInputSchema).max(MAX_SYNC_TOOLS),
    categories: z.array(syncCategorySchema).max(1_000).default([]),
    pageMappings: z.array(syncPageMappingSchema).max(10_000).default([]),
  })
  .superRefine((payload, context) => {
    rejectDuplicates(payload.tools, (t) => t.name, 'tools', 'name', 'tool name', context);
    rejectDuplicates(payload.categories, (c) => c.name, 'categories', 'name', 'category name', context);
    rejectDuplicates(payload.pageMappings, (m) => `${m.pagePattern}\u0000${m.category}`, 'pageMappings', 'pagePattern', 'page mapping (pattern and category)', context);
  });
/** A sync payload as a plugin writes it. */
export type SyncPayload = z.input<typeof syncPayloadSchema>;
/** A parsed sync payload (defaults applied). */
export type ParsedSyncPayload = z.output<typeof syncPayloadSchema>;
