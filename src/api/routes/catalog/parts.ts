/**
 * @module api/routes/catalog/parts
 * What every tool-registry route group is built from: the catalog service, the tenant
 * visibility, the seed's path prefix, and the admin write routes (create, update, delete) that
 * categories, page mappings and visibility rules share.
 */
import type { Hono } from 'hono';
import type { z } from 'zod';
import type { CatalogService } from '../../../catalog/service.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { TenantVisibility } from '../../tenancy.ts';

/** The tool registry's path prefix (seed 001 §8). */
export const BASE = '/internal/tool-registry';

/** The services a tool-registry route group uses. */
export interface CatalogRouteParts {
  catalog: CatalogService;
  tenancy: TenantVisibility;
}

/** One catalog resource: its collection path (one item is `${path}/:id`) and names. */
export interface AdminResource {
  path: string;
  /** What one item is called in validation messages (`category`, `category patch`). */
  noun: string;
  /** The response member holding the item (`{category: …}`). */
  field: string;
}

/** The catalog calls behind a resource's writes, each with the schema of its body. */
export interface AdminWrites<Create extends z.ZodType, Patch extends z.ZodType> {
  create: { schema: Create; run(input: z.output<Create>): Promise<unknown> };
  update: { schema: Patch; run(id: string, patch: z.output<Patch>): Promise<unknown> };
  remove(id: string): Promise<unknown>;
}

/** `POST path` (201), `PUT path/:id` and `DELETE path/:id` (204), each with the `admin` scope. */
export function registerAdminWrites<Create extends z.ZodType, Patch extends z.ZodType>(
  app: Hono<ApiEnv>,
  resource: AdminResource,
  writes: AdminWrites<Create, Patch>,
): void {
  app.post(resource.path, async (c) => {
    principalWith(c, 'admin');
    return c.json({ [resource.field]: await writes.create.run(await readJson(c, writes.create.schema, resource.noun)) }, 201);
  });
  app.put(`${resource.path}/:id`, async (c) => {
    principalWith(c, 'admin');
    const patch = await readJson(c, writes.update.schema, `${resource.noun} patch`);
    return c.json({ [resource.field]: await writes.update.run(c.req.param('id')!, patch) });
  });
  app.delete(`${resource.path}/:id`, async (c) => {
    principalWith(c, 'admin');
    await writes.remove(c.req.param('id')!);
    return c.body(null, 204);
  });
}
