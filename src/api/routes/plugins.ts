/**
 * @module api/routes/plugins
 * Plugins (DESIGN §3.5, seed 003) over HTTP, assembled from route groups of one job each in
 * `plugins/`: install, update, remove and re-sync (lifecycle), plugin health and call
 * aggregates (health), enable / disable per workspace or project (enablement), credentials and
 * settings (settings), workspaces and projects (workspaces), the Plugin Intelligence Documents
 * of seed 000 §6.3 (intelligence) and the marketplace (marketplace). Reads need the `read`
 * scope, writes `admin`. Every group filters through one shared `PluginVisibility`: a tenant key
 * (api/tenancy) reads only plugins with a tool it may see, and of those only its own
 * workspace's enablements, a count of its visible tools, and intelligence documents whose tool
 * definitions are cut to its visible tools.
 */
import type { PluginHealthSource } from '../../plugins/health.ts';
import type { PluginService } from '../../plugins/service.ts';
import { unrestrictedVisibility, type TenantVisibility } from '../tenancy.ts';
import type { ApiRouteModule } from '../app.ts';
import { combineRouteModules } from './combine.ts';
import { createPluginVisibility } from './plugins/visibility.ts';
import type { PluginRouteParts } from './plugins/parts.ts';
import { lifecycleRoutes } from './plugins/lifecycle.ts';
import { healthRoutes } from './plugins/health.ts';
import { enablementRoutes } from './plugins/enablement.ts';
import { settingsRoutes } from './plugins/settings.ts';
import { mountRoutes } from './plugins/mounts.ts';
import { workspaceRoutes } from './plugins/workspaces.ts';
import { intelligenceRoutes } from './plugins/intelligence.ts';
import { marketplaceRoutes } from './plugins/marketplace.ts';
import { verificationRoutes } from './plugins/verification.ts';
import type { VerificationService } from '../../verification/service/index.ts';
import { approvalRoutes } from './plugins/approvals.ts';
import type { PinningService } from '../../trust/pinning/index.ts';
import { trustRoutes } from './plugins/trust.ts';
import { oauthRoutes, type OAuthRouteServices } from './plugins/oauth.ts';
import type { TrustService } from '../../trust/types.ts';

/** Routes under /api/v1/plugins, /api/v1/workspaces and /api/v1/marketplace. */
export function pluginRoutes(services: { plugins: PluginService; tenancy?: TenantVisibility; health?: PluginHealthSource; pinning?: PinningService; verification?: VerificationService; trust?: TrustService; oauth?: OAuthRouteServices }): ApiRouteModule {
  const tenancy = services.tenancy ?? unrestrictedVisibility;
  const parts: PluginRouteParts = { plugins: services.plugins, tenancy, visibility: createPluginVisibility(services.plugins, tenancy) };
  return combineRouteModules([
    // Static paths first (`/plugins/intelligence/export`, `/plugins/health`), so neither
    // `intelligence` nor `health` is ever read as the `:id` of `GET /api/v1/plugins/:id`.
    intelligenceRoutes(parts),
    healthRoutes(parts, services.health),
    // Tool pinning (issue #10): `/plugins/quarantine` is static, so it goes before `:id`.
    ...(services.pinning === undefined ? [] : [approvalRoutes(parts, services.pinning)]),
    verificationRoutes(services.verification),
    // Trust, egress and reports (issue #10): every path is below `:id`.
    ...(services.trust === undefined ? [] : [trustRoutes(parts, services.trust)]),
    // A remote plugin's OAuth authorization (issue #27): paths below `:id`, and the public callback.
    ...(services.oauth === undefined ? [] : [oauthRoutes(parts, services.oauth)]),
    lifecycleRoutes(parts),
    enablementRoutes(parts),
    settingsRoutes(parts),
    mountRoutes(parts),
    workspaceRoutes(parts),
    marketplaceRoutes(parts),
  ]);
}
