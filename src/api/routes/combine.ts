/**
 * @module api/routes/combine
 * One `ApiRouteModule` from several route groups, so a feature's routes can live in small
 * modules of one job each (issue #17) while the app still plugs in one module per feature.
 * Groups register in the order given: Hono answers with the first matching handler, so a
 * group holding static paths (`/api/v1/plugins/health`) must come before one holding the
 * parameter path they would otherwise match (`/api/v1/plugins/:id`).
 */
import type { Hono } from 'hono';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { ApiEnv } from '../http.ts';
import type { OpenApiPaths } from '../openapi.ts';
import type { ApiRouteModule } from '../app.ts';

/** The route groups as one module: registration in order, OpenAPI paths and body limits merged. */
export function combineRouteModules(groups: readonly ApiRouteModule[]): ApiRouteModule {
  const openapi: OpenApiPaths = {};
  const bodyLimits: Record<string, number> = {};
  for (const group of groups) {
    for (const [path, methods] of Object.entries(group.openapi)) {
      const merged = (openapi[path] ??= {});
      for (const method of Object.keys(methods) as Array<keyof typeof methods>) {
        // Two groups describing one operation is a wiring mistake: the document would keep one at random.
        if (merged[method] !== undefined) throw new QuiverError(ErrorCodes.internal, `route groups both describe ${method.toUpperCase()} ${path}`);
        merged[method] = methods[method];
      }
    }
    for (const [path, bytes] of Object.entries(group.bodyLimits ?? {})) {
      if (bodyLimits[path] !== undefined) throw new QuiverError(ErrorCodes.internal, `route groups both set a body limit for ${path}`);
      bodyLimits[path] = bytes;
    }
  }
  // Public paths (an OAuth callback, issue #27) stay public in the combined module.
  const publicPaths = groups.flatMap((group) => group.publicPaths ?? []);
  return {
    register(app: Hono<ApiEnv>) {
      for (const group of groups) group.register(app);
    },
    openapi,
    ...(Object.keys(bodyLimits).length > 0 ? { bodyLimits } : {}),
    ...(publicPaths.length > 0 ? { publicPaths } : {}),
  };
}
