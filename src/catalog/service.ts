/**
 * @module catalog/service
 * The catalog service (DESIGN §3.2, seed 001 §4.2, §8.1–8.3, §9): tools with versions and
 * rollback, the category tree, context mappings, visibility rules and plugin sync, over one
 * database. Fronts call it; it never knows which front did.
 */
import { createCategoryOperations, type CategoryOperations } from './categories.ts';
import { createCatalogContext, type CatalogServiceOptions } from './context.ts';
import { createPageMappingOperations, type PageMappingOperations } from './page-mappings.ts';
import { createSyncOperations, type SyncOperations } from './sync.ts';
import { createToolOperations, type ToolOperations } from './tools.ts';
import { createVisibilityRuleOperations, type VisibilityRuleOperations } from './visibility-rules.ts';

/** Everything the catalog offers. */
export interface CatalogService
  extends ToolOperations, CategoryOperations, PageMappingOperations, VisibilityRuleOperations, SyncOperations {}

/**
 * Creates the catalog service.
 * @example
 * const catalog = createCatalogService({ db, onChange: (event) => caches.invalidate(event) });
 * const tool = await catalog.createTool({ name: 'search_docs', description: 'Full-text search over docs' });
 */
export function createCatalogService(options: CatalogServiceOptions): CatalogService {
  const context = createCatalogContext(options);
  return Object.freeze({
    ...createToolOperations(context),
    ...createCategoryOperations(context),
    ...createPageMappingOperations(context),
    ...createVisibilityRuleOperations(context),
    ...createSyncOperations(context),
  });
}
