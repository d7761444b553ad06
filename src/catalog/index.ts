/**
 * @module catalog
 * Public surface of the catalog service: the factory, its operations' input and output
 * types, the pure page-pattern matcher and the visibility-rule conditions schema (the
 * selection pipeline evaluates rules with them).
 */
export { createCatalogService } from './service.ts';
export type { CatalogService } from './service.ts';
export type { CatalogServiceOptions, CatalogChangeEvent, CatalogLogger } from './context.ts';

export type { ToolOperations, ToolPage, ToolLookupOptions } from './tools.ts';
export {
  createToolInputSchema, toolPatchSchema, toolListQuerySchema, deleteToolInputSchema, rollbackInputSchema, MAX_PAGE_SIZE,
} from './schemas.ts';
export type { CreateToolInput, ToolPatch, ToolListQueryInput, DeleteToolInput, RollbackInput } from './schemas.ts';
export { toolSnapshotSchema } from './tool-state.ts';
export type { ToolSnapshot } from './tool-state.ts';
export type { ToolVersionRecord } from '../store/repositories/versions.ts';

export { buildCategoryTree, createCategoryInputSchema, categoryPatchSchema } from './categories.ts';
export type { CategoryOperations, CategoryNode, CategoryScope, PageCategoryMatch, CreateCategoryInput, CategoryPatch } from './categories.ts';
export type { CategoryRecord } from '../store/repositories/categories.ts';

export { createPageMappingInputSchema, pageMappingPatchSchema } from './page-mappings.ts';
export type { PageMappingOperations, PageMappingFilter, CreatePageMappingInput, PageMappingPatch } from './page-mappings.ts';
export type { PageMappingRecord } from '../store/repositories/page-mappings.ts';
export {
  matchesPagePattern, matchPageMappings, parsePagePattern, pagePatternProblem, pagePatternSchema, pagePatternSpecificity,
} from './page-pattern.ts';
export type { PagePatternMode, ParsedPagePattern, PagePatternMapping } from './page-pattern.ts';

export {
  createVisibilityRuleInputSchema, visibilityRulePatchSchema, visibilityRuleListQuerySchema,
} from './visibility-rules.ts';
export type {
  VisibilityRuleOperations, CreateVisibilityRuleInput, VisibilityRulePatch, VisibilityRuleListQueryInput,
} from './visibility-rules.ts';
export {
  TIER_ORDER, tierComparisonSchema, visibilityConditionsSchemas, visibilityEffectSchema, visibilityRuleTypeSchema,
} from './visibility-conditions.ts';
export type { Tier, TierComparison, VisibilityConditions } from './visibility-conditions.ts';
export type { VisibilityRuleRecord, VisibilityRuleType, VisibilityEffect } from '../store/repositories/visibility-rules.ts';

export { syncPayloadSchema, MAX_SYNC_TOOLS } from './sync-schema.ts';
export type { SyncPayload, ParsedSyncPayload } from './sync-schema.ts';
export type { SyncOperations, SyncReport } from './sync.ts';
