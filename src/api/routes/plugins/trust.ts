/**
 * @module api/routes/plugins/trust
 * Trust and egress of a plugin over HTTP (issue #10): its effective trust and how it came
 * about, admin grants and caps (recorded with the key), the enforced egress allow-list and its
 * decision log, and user reports. Reads follow the caller's plugin visibility; changes to trust
 * and egress need the admin scope; any caller that may see a plugin may report it.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Principal } from '../../../access/api-keys.ts';
import { trustLevelSchema } from '../../../runtime/types.ts';
import type { TrustService } from '../../../trust/types.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

const reasonSchema = z.string().trim().min(1).max(1000);

/** Body of `PUT /api/v1/plugins/:id/trust`: exactly one of level, cap, clear, and a reason. */
export const trustBodySchema = z
  .strictObject({ level: trustLevelSchema.optional(), cap: trustLevelSchema.optional(), clear: z.literal(true).optional(), reason: reasonSchema })
  .refine((body) => [body.level, body.cap, body.clear].filter((value) => value !== undefined).length === 1, { message: 'give exactly one of level, cap and clear' });

/** Body of `POST /api/v1/plugins/:id/egress`: `HOST[:PORT]` (port 443 by default). */
export const egressBodySchema = z.strictObject({ target: z.string().min(1).max(300), reason: z.string().max(1000).optional() });

export const reportBodySchema = z.strictObject({ reason: reasonSchema });

const limitQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).optional() });

/** Who made a change over HTTP: the key's id and name. */
function actorOf(principal: Principal): string {
  return `key:${principal.keyId}:${principal.name}`;
}

/** `/api/v1/plugins/:id/trust`, `/egress`, `/egress/decisions`, `/reports`. */
export function trustRoutes({ visibility }: Pick<PluginRouteParts, 'visibility'>, trust: TrustService): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins/:id/trust', async (c) => c.json(await trust.view(await visibility.plugin(c))));
      app.put('/api/v1/plugins/:id/trust', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await readJson(c, trustBodySchema, 'trust change');
        const kind = body.clear ? 'clear' : body.level !== undefined ? 'grant' : 'cap';
        return c.json(await trust.setTrust(await visibility.plugin(c), { kind, level: body.level ?? body.cap, reason: body.reason, actor: actorOf(principal) }));
      });
      app.get('/api/v1/plugins/:id/egress', async (c) => {
        const query = readQuery(c, limitQuerySchema);
        return c.json(await trust.egress(await visibility.plugin(c), { limit: query.limit ?? 50 }));
      });
      app.get('/api/v1/plugins/:id/egress/decisions', async (c) => {
        const query = readQuery(c, limitQuerySchema);
        const { decisions } = await trust.egress(await visibility.plugin(c), { limit: query.limit ?? 50 });
        return c.json({ decisions });
      });
      app.post('/api/v1/plugins/:id/egress', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await readJson(c, egressBodySchema, 'egress rule');
        const result = await trust.allow(await visibility.plugin(c), body.target, { actor: actorOf(principal), ...(body.reason !== undefined ? { reason: body.reason } : {}) });
        return c.json(result, result.created ? 201 : 200);
      });
      app.delete('/api/v1/plugins/:id/egress/:target', async (c) => {
        principalWith(c, 'admin');
        const removed = await trust.deny(await visibility.plugin(c), c.req.param('target'));
        return c.json({ removed });
      });
      app.post('/api/v1/plugins/:id/reports', async (c) => {
        const principal = c.get('principal');
        const body = await readJson(c, reportBodySchema, 'report');
        return c.json(await trust.report(await visibility.plugin(c), { reason: body.reason, actor: actorOf(principal) }), 201);
      });
    },
    openapi: {
      '/api/v1/plugins/:id/trust': {
        get: { summary: "A plugin's effective trust: verdict, admin grant or cap, runtime score, isolation at its next start, history (issue #10)", tags: ['plugins'] },
        put: { summary: 'Grant ({level}), cap ({cap}) or clear ({clear: true}) a plugin\'s trust with a reason; admin scope, recorded with the key', tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/egress': {
        get: { summary: "A plugin's egress allow-list, whether it is enforced at its level, and recent decisions (?limit=)", tags: ['plugins'] },
        post: { summary: 'Allow a destination ({target: "HOST[:PORT]", reason?}); admin scope; the plugin restarts with it on its next call', tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/egress/:target': {
        delete: { summary: 'Remove a destination (HOST[:PORT], URL-encoded) from the allow-list; admin scope', tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/egress/decisions': {
        get: { summary: 'Recent allowed and denied connections of a plugin (port 0: a refused name lookup)', tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/reports': {
        post: { summary: 'Report a misbehaving plugin ({reason}): lowers its runtime trust and queues a re-verification', tags: ['plugins'] },
      },
    },
  };
}
