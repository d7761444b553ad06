/**
 * @module api/routes/catalog/visibility-rules
 * Visibility rules (seed 001 §8.3): the active ones unless `?includeInactive=true`, and their
 * admin writes. Rules name other organisations and users, so a tenant key never reads them.
 */
import type { Hono } from 'hono';
import {
  createVisibilityRuleInputSchema, visibilityRuleListQuerySchema, visibilityRulePatchSchema,
} from '../../../catalog/visibility-rules.ts';
import { principalWith, readQuery, type ApiEnv } from '../../http.ts';
import { refuseTenant } from '../../tenancy.ts';
import type { ApiRouteModule } from '../../app.ts';
import { BASE, registerAdminWrites, type CatalogRouteParts } from './parts.ts';

/** Routes under /internal/tool-registry/visibility-rules. */
export function visibilityRuleRoutes({ catalog }: CatalogRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get(`${BASE}/visibility-rules`, async (c) => {
        refuseTenant(principalWith(c, 'read'), 'visibility rules');
        return c.json({ rules: await catalog.listVisibilityRules(readQuery(c, visibilityRuleListQuerySchema)) });
      });
      registerAdminWrites(app, { path: `${BASE}/visibility-rules`, noun: 'visibility rule', field: 'rule' }, {
        create: { schema: createVisibilityRuleInputSchema, run: (input) => catalog.createVisibilityRule(input) },
        update: { schema: visibilityRulePatchSchema, run: (id, patch) => catalog.updateVisibilityRule(id, patch) },
        remove: (id) => catalog.deleteVisibilityRule(id),
      });
    },
    openapi: {
      [`${BASE}/visibility-rules`]: {
        get: { summary: 'Visibility rules in evaluation order', tags: ['catalog'] },
        post: { summary: 'Create a rule', tags: ['catalog'], requestBody: createVisibilityRuleInputSchema, responses: { '201': 'Created' } },
      },
      [`${BASE}/visibility-rules/:id`]: {
        put: { summary: 'Update a rule', tags: ['catalog'], requestBody: visibilityRulePatchSchema },
        delete: { summary: 'Delete a rule', tags: ['catalog'], responses: { '204': 'Deleted' } },
      },
    },
  };
}
