/**
 * @module catalog/schemas
 * zod schemas for what callers hand the catalog service (admin API bodies and queries).
 * Admin input is strict: an unknown key is an error, so a typo cannot pass silently.
 */
import { z } from 'zod';
import { pluginNameSchema } from '../core/name-schemas.ts';
import { toolInputSchema, toolStatusSchema } from '../core/tool.ts';
import { isUuid } from '../store/repositories/mapping.ts';

/** A UUID (any version; ids are compared as text). */
export const uuidSchema = z.string().refine(isUuid, 'must be a UUID');

const auditFields = {
  /** Why the change was made; stored on the version row. */
  changeReason: z.string().min(1).max(1_000).optional(),
  /** Who made it (a user id, an API key name…); stored on the version row. */
  changedBy: z.string().min(1).max(200).optional(),
};

/** Input of `createTool`: a tool (core/tool.ts) plus the plugin it belongs to, if any. */
export const createToolInputSchema = toolInputSchema.extend({
  pluginName: pluginNameSchema.optional(),
  ...auditFields,
}).strict();
/** `createTool` input as a caller writes it. */
export type CreateToolInput = z.input<typeof createToolInputSchema>;

const shape = toolInputSchema.shape;
/** Input of `updateTool`: any tool field (null clears a nullable one); the plugin cannot change. */
export const toolPatchSchema = z.strictObject({
  name: shape.name.optional(),
  displayName: shape.displayName.unwrap().nullable().optional(),
  description: shape.description.unwrap().optional(),
  parameters: shape.parameters.unwrap().optional(),
  returnSchema: shape.returnSchema.unwrap().nullable().optional(),
  annotations: shape.annotations.unwrap().optional(),
  summary: shape.summary.unwrap().nullable().optional(),
  tags: shape.tags.unwrap().optional(),
  whenToUse: shape.whenToUse.unwrap().optional(),
  whenNotToUse: shape.whenNotToUse.unwrap().optional(),
  exampleQueries: shape.exampleQueries.unwrap().optional(),
  category: shape.category.unwrap().nullable().optional(),
  metadata: shape.metadata.unwrap().optional(),
  isAlwaysPinned: shape.isAlwaysPinned.unwrap().optional(),
  pinWeight: shape.pinWeight.unwrap().optional(),
  status: shape.status.unwrap().optional(),
  schemaVersion: shape.schemaVersion.unwrap().optional(),
  orgId: shape.orgId.unwrap().nullable().optional(),
  /** Clears (or sets) the review flag a major schema bump raised (seed 001 §9.3). */
  needsReview: z.boolean().optional(),
  ...auditFields,
});
/** `updateTool` input. */
export type ToolPatch = z.input<typeof toolPatchSchema>;

/** The most tools one page returns. */
export const MAX_PAGE_SIZE = 500;

/** A flag that may come as query-string text (`true` / `false`). */
export const booleanFlag = z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')]);

/** Filters and paging of `listTools`; numbers and flags may arrive as query-string text. */
export const toolListQuerySchema = z.strictObject({
  pluginId: uuidSchema.optional(),
  pluginName: pluginNameSchema.optional(),
  categoryId: uuidSchema.optional(),
  category: z.string().min(1).max(200).optional(),
  status: toolStatusSchema.optional(),
  embeddingStatus: z.enum(['pending', 'current', 'stale']).optional(),
  orgId: z.string().min(1).max(200).optional(),
  search: z.string().min(1).max(200).optional(),
  includeDeleted: booleanFlag.default(false),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
/** `listTools` input. */
export type ToolListQueryInput = z.input<typeof toolListQuerySchema>;

/** Input of `deleteTool`. */
export const deleteToolInputSchema = z.strictObject(auditFields);
/** `deleteTool` input. */
export type DeleteToolInput = z.input<typeof deleteToolInputSchema>;

/** Input of `rollbackTool`. */
export const rollbackInputSchema = z.strictObject({
  version: z.coerce.number().int().min(1),
  ...auditFields,
});
/** `rollbackTool` input. */
export type RollbackInput = z.input<typeof rollbackInputSchema>;

