/**
 * @module api/routes/plugins/pid-generation
 * Generated intelligence documents over HTTP (issue #14): generate one from chosen sources,
 * read the stored one with its provenance, ask whether its sources changed, and diff it
 * against the plugin's current document. Admin only: a generated document lists every tool
 * of the plugin and where each field came from.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { PidGenerationService } from '../../../intelligence/index.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';

const generateBodySchema = z.strictObject({
  from: z.array(z.string().min(1).max(100)).max(10).optional(),
  dryRun: z.boolean().optional(),
});

/** Routes of PID generation. */
export function pidGenerationRoutes({ pidGeneration }: { pidGeneration: PidGenerationService }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/api/v1/plugins/:id/intelligence/generate', async (c) => {
        principalWith(c, 'admin');
        const hasBody = (c.req.header('content-length') ?? '0') !== '0' || c.req.header('content-type') !== undefined;
        const body = hasBody ? await readJson(c, generateBodySchema, 'generation options') : {};
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
      '/api/v1/plugins/:id/intelligence/generated/diff': { get: { summary: 'Field-by-field diff of the generated PID against the current one, with sources', tags: ['intelligence'] } },
    },
  };
}
