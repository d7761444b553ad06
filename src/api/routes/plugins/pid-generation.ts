/**
 * @module api/routes/plugins/pid-generation
 * Generated intelligence documents over HTTP (issue #14): generate one from chosen sources,
 * read the stored one with its provenance, ask whether its sources changed, and diff it
 * against the plugin's current document. Admin only: a generated document lists every tool
 * of the plugin and where each field came from.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { PidGenerationService } from '../../../intelligence/index.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';

const generateBodySchema = z.strictObject({
  from: z.array(z.string().min(1).max(100)).max(10).optional(),
  dryRun: z.boolean().optional(),
});

const reviewBodySchema = z.strictObject({
  generationId: z.string().uuid().optional(),
  force: z.boolean().optional(),
});

/** A JSON body when one was sent, else `{}`. */
async function optionalBody<T extends z.ZodType>(c: Context<ApiEnv>, schema: T): Promise<Partial<z.infer<T>>> {
  const hasBody = (c.req.header('content-length') ?? '0') !== '0' || c.req.header('content-type') !== undefined;
  return hasBody ? await readJson(c, schema, 'options') : {};
}

/** Routes of PID generation. */
export function pidGenerationRoutes({ pidGeneration }: { pidGeneration: PidGenerationService }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/api/v1/plugins/:id/intelligence/generate', async (c) => {
        principalWith(c, 'admin');
        const body = await optionalBody(c, generateBodySchema);
        const report = await pidGeneration.generate(c.req.param('id'), { from: body.from, dryRun: body.dryRun });
        return c.json(report, report.stored ? 201 : 200);
      });
      app.get('/api/v1/plugins/:id/intelligence/generated', async (c) => {
        principalWith(c, 'admin');
        return c.json(await pidGeneration.get(c.req.param('id')));
      });
      app.get('/api/v1/plugins/:id/intelligence/generated/status', async (c) => {
        principalWith(c, 'admin');
        return c.json(await pidGeneration.status(c.req.param('id')));
      });
      app.post('/api/v1/plugins/:id/intelligence/generated/accept', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await optionalBody(c, reviewBodySchema);
        return c.json(await pidGeneration.accept(c.req.param('id'), { generationId: body.generationId, force: body.force, actor: `key:${principal.name}` }));
      });
      app.post('/api/v1/plugins/:id/intelligence/generated/reject', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await optionalBody(c, reviewBodySchema);
        return c.json(await pidGeneration.reject(c.req.param('id'), { generationId: body.generationId, actor: `key:${principal.name}` }));
      });
      app.get('/api/v1/plugins/:id/intelligence/generated/diff', async (c) => {
        principalWith(c, 'admin');
        return c.json(await pidGeneration.diff(c.req.param('id')));
      });
    },
    openapi: {
      '/api/v1/plugins/:id/intelligence/generate': {
        post: { summary: 'Generate the PID from MCP discovery, zod, TypeScript JSDoc, OpenAPI and optionally an LLM (body: {from?, dryRun?}; issue #14)', tags: ['intelligence'], responses: { '201': 'Generated and stored', '200': 'Dry run' } },
      },
      '/api/v1/plugins/:id/intelligence/generated': { get: { summary: 'The generated PID with per-field provenance, input hashes and LLM usage', tags: ['intelligence'] } },
      '/api/v1/plugins/:id/intelligence/generated/status': { get: { summary: 'Whether the generated PID is stale and which sources changed', tags: ['intelligence'] } },
      '/api/v1/plugins/:id/intelligence/generated/accept': {
        post: { summary: "Adopt the latest generated PID as the plugin's current one (body: {generationId?, force?}); stale needs force, rejected and invalid are refused", tags: ['intelligence'], responses: { '200': 'Accepted', '409': 'Stale, rejected or not the latest generation' } },
      },
      '/api/v1/plugins/:id/intelligence/generated/reject': {
        post: { summary: 'Mark the latest generated PID rejected (body: {generationId?}); kept for history until the next generation', tags: ['intelligence'], responses: { '200': 'Rejected', '409': 'Already accepted or not the latest' } },
      },
      '/api/v1/plugins/:id/intelligence/generated/diff': { get: { summary: 'Field-by-field diff of the generated PID against the current one, with sources', tags: ['intelligence'] } },
    },
  };
}
