/**
 * @module api/tenancy
 * Who a tenant key is, and what it may read. A key bound to an organisation, user, workspace,
 * project, role or tier (and not holding `admin`) is a tenant key:
 * - its identity comes from the key and nothing else (`tenantContext`): a request body may
 *   narrow what it sees (a page, a query) but never widen it, so every identity field a body
 *   sets must equal what the key implies, else 403 naming the field (`assertBodyWithinKey`,
 *   issue #18 finding 1);
 * - catalog, plugin, category, mapping and analytics reads show it only what its context can
 *   see — the same decision selection makes (policy, enablement, organisation) — so two
 *   organisations never see each other's tools through any endpoint (finding 5).
 * An unbound read key is an operator's read-only key and sees the whole hub; admin keys act
 * for anyone (an orchestrator selecting for its users).
 */
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { hasScope, type Principal } from '../access/api-keys.ts';
import { DEFAULT_WORKSPACE } from '../core/names.ts';

/** The workspace a tenant key without a workspace binding works in (REST reads allow it this one only). */
export const TENANT_DEFAULT_WORKSPACE = DEFAULT_WORKSPACE;

/** A workspace (and project) reference resolved to ids. */
export interface ResolvedScope {
  workspaceId: string;
  projectId: string | null;
}

/** Visibility of catalog data for tenant keys. */
export interface TenantVisibility {
  /** Tool ids the tenant may see, or undefined when the key is not a tenant key. */
  visibleToolIds(principal: Principal): Promise<ReadonlySet<string> | undefined>;
  /** Plugin names the tenant may see (those with a visible tool), or undefined when unrestricted. */
  visiblePluginNames(principal: Principal): Promise<ReadonlySet<string> | undefined>;
  /** Category ids holding a tool the tenant may see (directly), or undefined when unrestricted. */
  visibleCategoryIds(principal: Principal): Promise<ReadonlySet<string> | undefined>;
  /** A workspace name or id (and a project name or id in it) as ids; undefined when either does not exist. */
  resolveScope(workspace: string, project?: string | null): Promise<ResolvedScope | undefined>;
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

/** The identity fields of a selection context (everything but the page and the session). */
export interface TenantContext {
  workspace: string;
  project?: string;
  orgId?: string;
  userId?: string;
  roles?: string[];
  tier?: string;
}

/** The selection context a tenant key stands for: its bindings and nothing else. */
export function tenantContext(principal: Principal): TenantContext {
  return {
    workspace: principal.workspaceId ?? TENANT_DEFAULT_WORKSPACE,
    ...(principal.projectId ? { project: principal.projectId } : {}),
    ...(principal.orgId ? { orgId: principal.orgId } : {}),
    ...(principal.userId ? { userId: principal.userId } : {}),
    ...(principal.roles.length > 0 ? { roles: [...principal.roles] } : {}),
    ...(principal.tier ? { tier: principal.tier } : {}),
  };
}

/** The identity fields a request body may carry (the rest of the context only narrows). */
export interface BodyIdentity {
  orgId?: string | null | undefined;
  userId?: string | null | undefined;
  roles?: readonly string[] | null | undefined;
  tier?: string | null | undefined;
  workspace?: string | null | undefined;
  project?: string | null | undefined;
}

function widening(field: string, why: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, `context.${field} ${why}: a request may narrow what its API key sees, never widen it`, {
    details: { field: `context.${field}` },
  });
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((role) => right.has(role));
}

/**
 * Throws `forbidden` (details.field names the field) when a tenant key's request body sets an
 * identity field to anything but what the key implies: its binding, or for an unbound field
 * nothing (the `default` workspace for the workspace). A project is a widening too (project
 * enablement adds plugins). A workspace or project given by name is resolved with `resolve`;
 * one that does not exist is refused the same way, so the answer never confirms existence.
 */
export async function assertBodyWithinKey(
  principal: Principal,
  body: BodyIdentity,
  resolve: TenantVisibility['resolveScope'],
): Promise<void> {
  const unset = (value: unknown) => value === undefined || value === null;
  const scalar = (field: 'orgId' | 'userId' | 'tier', bound: string | null) => {
    const value = body[field];
    if (!unset(value) && value !== bound) {
      throw widening(field, bound === null ? 'is not bound to this API key' : 'differs from the API key binding');
    }
  };
  scalar('orgId', principal.orgId);
  scalar('userId', principal.userId);
  scalar('tier', principal.tier);
  if (!unset(body.roles) && !sameRoles(body.roles!, principal.roles)) {
    throw widening('roles', principal.roles.length === 0 ? 'are not bound to this API key' : 'differ from the API key binding');
  }
  const workspace = body.workspace ?? null;
  const project = body.project ?? null;
  if (project !== null && principal.projectId === null) throw widening('project', 'is not bound to this API key');
  const keyWorkspace = principal.workspaceId ?? TENANT_DEFAULT_WORKSPACE;
  // The key's own values, as written in the key, need no look-up.
  if ((workspace === null || workspace === keyWorkspace) && (project === null || project === principal.projectId)) return;
  const asked = await resolve(workspace ?? keyWorkspace, project);
  const own = await resolve(keyWorkspace, principal.projectId);
  if (asked === undefined || own === undefined || asked.workspaceId !== own.workspaceId) {
    throw widening(workspace !== null ? 'workspace' : 'project', principal.workspaceId === null ? `is not this API key's workspace ('${TENANT_DEFAULT_WORKSPACE}')` : 'differs from the API key binding');
  }
  if (project !== null && asked.projectId !== own.projectId) throw widening('project', 'differs from the API key binding');
}

/** Visibility that never restricts (tests, or a hub without tenants); it resolves no scope. */
export const unrestrictedVisibility: TenantVisibility = {
  visibleToolIds: async () => undefined,
  visiblePluginNames: async () => undefined,
  visibleCategoryIds: async () => undefined,
  resolveScope: async () => undefined,
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
