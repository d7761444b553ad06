/**
 * @module api/routes/catalog
 * The tool-registry admin API (seed 001 §8.1–8.3) and plugin self-registration (§8.5, §9),
 * assembled from route groups of one job each in `catalog/`:
 * - tools: list (filters, paging), detail, register, update (a new version), soft delete,
 *   version history, rollback;
 * - categories: tree (or `?flat=true`), create, update, delete, categories for a page; page
 *   mappings: list, create, update, delete;
 * - visibility rules: list, create, update, delete;
 * - `POST /internal/tool-registry/plugins/sync`: a plugin declares its tools, categories and
 *   mappings. The seed's `X-Service-Key` is an API key with the `admin` scope here.
 * Reads need the `read` scope, writes `admin`. Bodies are validated by the catalog's own
 * schemas; the change is attributed to the calling key's name in the version history.
 * A tenant key (api/tenancy) reads only the tools it may see, the categories holding one of
 * them (directly or through a sub-category, so the tree stays whole) and the page mappings of
 * those categories (issue #18 finding 5); visibility rules are admin-only.
 */
import type { CatalogService } from '../../catalog/service.ts';
import { unrestrictedVisibility, type TenantVisibility } from '../tenancy.ts';
import type { ApiRouteModule } from '../app.ts';
import { combineRouteModules } from './combine.ts';
import type { CatalogRouteParts } from './catalog/parts.ts';
import { toolRoutes } from './catalog/tools.ts';
import { categoryRoutes } from './catalog/categories.ts';
import { visibilityRuleRoutes } from './catalog/visibility-rules.ts';
import { pluginSyncRoutes } from './catalog/plugin-sync.ts';

/** Routes of the tool-registry admin API. */
export function catalogRoutes(services: { catalog: CatalogService; tenancy?: TenantVisibility }): ApiRouteModule {
  const parts: CatalogRouteParts = { catalog: services.catalog, tenancy: services.tenancy ?? unrestrictedVisibility };
  return combineRouteModules([toolRoutes(parts), categoryRoutes(parts), visibilityRuleRoutes(parts), pluginSyncRoutes(parts)]);
}
