/**
 * @module core/tool
 * The shape of a tool as it enters the catalog (admin create, plugin sync, discovery) and
 * the record the catalog hands to every other part. Field names follow seed 001 §4.2
 * (tool_registry), mapped to camelCase; `whenNotToUse` is the registry's `limitations`.
 */
import { z } from 'zod';
import { toolNameSchema } from './name-schemas.ts';
import { contentHash } from './hash.ts';

/** A JSON Schema object (kept as-is; only its top level is checked). */
export const jsonSchemaObjectSchema = z.record(z.string(), z.unknown());

/** Lifecycle of a tool (seed 001 §4.2). */
export const toolStatusSchema = z.enum(['draft', 'active', 'deprecated', 'retired']);
export type ToolStatus = z.infer<typeof toolStatusSchema>;

/** Embedding lifecycle (seed 001 §4.2): pending → current; stale after a content change. */
export type EmbeddingStatus = 'pending' | 'current' | 'stale';

const shortText = z.string().max(2_000);
const semverSchema = z.string().regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, 'schemaVersion must be semver, e.g. 1.2.0');

/** A tool as given by an admin, a plugin sync payload, or MCP discovery. */
export const toolInputSchema = z.object({
  name: toolNameSchema,
  displayName: z.string().max(200).optional(),
  description: z.string().max(20_000).default(''),
  /** JSON Schema of the arguments (MCP `inputSchema`). */
  parameters: jsonSchemaObjectSchema.default({ type: 'object' }),
  returnSchema: jsonSchemaObjectSchema.optional(),
  /** MCP tool annotations (readOnlyHint, idempotentHint, destructiveHint, openWorldHint, title). */
  annotations: z.record(z.string(), z.unknown()).default({}),
  summary: z.string().max(1_000).optional(),
  tags: z.array(z.string().min(1).max(100)).max(100).default([]),
  whenToUse: z.array(shortText).max(100).default([]),
  whenNotToUse: z.array(shortText).max(100).default([]),
  exampleQueries: z.array(shortText).max(500).default([]),
  /** Category name (resolved within the plugin's categories, then global ones). */
  category: z.string().min(1).max(200).optional(),
  /** Extra PID tool fields (llmNotes, sideEffects, requiredContext, outputSchema…). */
  metadata: z.record(z.string(), z.unknown()).default({}),
  isAlwaysPinned: z.boolean().default(false),
  pinWeight: z.number().int().min(-1_000_000).max(1_000_000).default(0),
  status: toolStatusSchema.default('active'),
  schemaVersion: semverSchema.default('1.0.0'),
  /** Restricts the tool to one organisation; absent means every organisation. */
  orgId: z.string().min(1).max(200).optional(),
});

/** Parsed tool input (defaults applied). */
export type ToolInput = z.output<typeof toolInputSchema>;
/** Tool input as a caller may write it (defaults optional). */
export type ToolInputDraft = z.input<typeof toolInputSchema>;

/** A tool as stored in the catalog. */
export interface ToolRecord {
  id: string;
  name: string;
  /** `<plugin>__<tool>` when the tool belongs to a plugin, else the bare name. */
  qualifiedName: string;
  displayName: string | null;
  pluginId: string | null;
  pluginName: string | null;
  orgId: string | null;
  categoryId: string | null;
  categoryName: string | null;
  description: string;
  parameters: Record<string, unknown>;
  returnSchema: Record<string, unknown> | null;
  annotations: Record<string, unknown>;
  summary: string | null;
  tags: string[];
  whenToUse: string[];
  whenNotToUse: string[];
  exampleQueries: string[];
  metadata: Record<string, unknown>;
  isAlwaysPinned: boolean;
  pinWeight: number;
  status: ToolStatus;
  schemaVersion: string;
  version: number;
  needsReview: boolean;
  contentHash: string;
  embeddingStatus: EmbeddingStatus;
  lastEmbeddedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/**
 * The fields whose change means the tool means something different to retrieval:
 * name, description, parameters and the retrieval metadata (DESIGN §3.1, seed 001 §6.10).
 * A change here marks the embedding stale.
 */
export function toolContentHash(tool: {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  summary?: string | null | undefined;
  tags: readonly string[];
  whenToUse: readonly string[];
  whenNotToUse: readonly string[];
  exampleQueries: readonly string[];
}): string {
  return contentHash({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    summary: tool.summary ?? null,
    tags: tool.tags,
    whenToUse: tool.whenToUse,
    whenNotToUse: tool.whenNotToUse,
    exampleQueries: tool.exampleQueries,
  });
}
