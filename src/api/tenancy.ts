/**
 * @module api/tenancy
 * What a tenant key may read. A key bound to an organisation, user, workspace, project, role
 * or tier (and not holding `admin`) is a tenant key: catalog and plugin reads show it only the
 * tools its context can see — the same decision selection makes (policy, enablement,
 * organisation) — so two organisations never see each other's tools through any endpoint.
 * An unbound read key is an operator's read-only key and sees the whole hub.
 */
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { hasScope, type Principal } from '../access/api-keys.ts';

/** Visibility of catalog data for tenant keys. */
export interface TenantVisibility {
  /** Tool ids the tenant may see, or undefined when the key is not a tenant key. */
  visibleToolIds(principal: Principal): Promise<ReadonlySet<string> | undefined>;
  /** Plugin names the tenant may see (those with a visible tool), or undefined when unrestricted. */
  visiblePluginNames(principal: Principal): Promise<ReadonlySet<string> | undefined>;
}

/** True when the key's reads are restricted to its own context. */
export function isTenantKey(principal: Principal): boolean {
  if (hasScope(principal, 'admin')) return false;
  return (
    principal.orgId !== null ||
    principal.userId !== null ||
    principal.workspaceId !== null ||
    principal.projectId !== null ||
    principal.roles.length > 0 ||
    principal.tier !== null
  );
}

/** Visibility that never restricts (tests, or a hub without tenants). */
export const unrestrictedVisibility: TenantVisibility = {
  visibleToolIds: async () => undefined,
  visiblePluginNames: async () => undefined,
};

/** Throws not_found (never "forbidden", which would confirm existence) unless visible. */
export function assertVisible(visible: ReadonlySet<string> | undefined, id: string, what: string): void {
  if (visible !== undefined && !visible.has(id)) throw notFound(what, id);
}

/** Refuses admin-only configuration reads (e.g. visibility rules) to tenant keys. */
export function refuseTenant(principal: Principal, what: string): void {
  if (isTenantKey(principal)) {
    throw new QuiverError(ErrorCodes.forbidden, `${what} are visible to admin keys only`);
  }
}
