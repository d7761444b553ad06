/**
 * @module api/routes/plugins/verification
 * Verification reports over HTTP (seed 000 §4.2, issue #10). Reports are admin-scoped: they
 * name every tool, file and dependency finding of a plugin, more than a tenant key may see of
 * it. Starting a verification queues a background job (202 with the job id, polled at
 * `/api/v1/verification/jobs/:jobId`). The public key that checks report signatures is readable
 * with any key. A hub wired without verification answers 503 `unavailable`.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { ErrorCodes, QuiverError, notFound } from '../../../core/errors.ts';
import type { VerificationService } from '../../../verification/service/index.ts';
import { principalWith, readQuery, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';

const historyQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(20) });

/** `POST /api/v1/plugins/:id/verify`, `GET …/verification`, `GET …/verification/history`, the public key and job status. */
export function verificationRoutes(source: VerificationService | undefined): ApiRouteModule {
  const verification = (): VerificationService => {
    if (source === undefined) throw new QuiverError(ErrorCodes.unavailable, 'verification is not wired into this hub');
    return source;
  };
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/verification/public-key', async (c) => {
        principalWith(c, 'read');
        const key = await verification().publicKey();
        return c.json({ algorithm: 'Ed25519', signatureFormat: 'detached JWS (EdDSA) over the canonical JSON of the report without signature', ...key });
      });
      app.get('/api/v1/verification/jobs/:jobId', async (c) => {
        principalWith(c, 'admin');
        const job = await verification().job(c.req.param('jobId'));
        if (job === undefined) throw notFound('verification job', c.req.param('jobId'));
        return c.json({ job });
      });
      app.post('/api/v1/plugins/:id/verify', async (c) => {
        principalWith(c, 'admin');
        const job = await verification().enqueue(c.req.param('id'), 'requested through the API');
        return c.json({ jobId: job.id, status: job.status, plugin: job.payload['plugin'], version: job.payload['version'] }, 202);
      });
      app.get('/api/v1/plugins/:id/verification', async (c) => {
        principalWith(c, 'admin');
        const report = await verification().latestReport(c.req.param('id'));
        if (report === undefined) throw notFound('verification report of plugin', c.req.param('id'));
        return c.json(report);
      });
      app.get('/api/v1/plugins/:id/verification/history', async (c) => {
        principalWith(c, 'admin');
        const { limit } = readQuery(c, historyQuerySchema);
        const reports = await verification().reports(c.req.param('id'), { limit });
        return c.json({ reports });
      });
    },
    openapi: {
      '/api/v1/plugins/:id/verify': { post: { summary: 'Queue a verification of the installed version (admin); 202 with the job id', tags: ['plugins', 'verification'] } },
      '/api/v1/plugins/:id/verification': { get: { summary: 'The latest signed verification report of a plugin (admin)', tags: ['plugins', 'verification'] } },
      '/api/v1/plugins/:id/verification/history': {
        get: { summary: 'Signed verification reports of a plugin, newest first (admin; ?limit=, default 20)', tags: ['plugins', 'verification'], parameters: [{ name: 'limit', in: 'query' }] },
      },
      '/api/v1/verification/public-key': { get: { summary: "The hub's Ed25519 public key (PEM) that checks report signatures offline", tags: ['verification'] } },
      '/api/v1/verification/jobs/:jobId': { get: { summary: 'Status of a queued verification job (admin)', tags: ['verification'] } },
    },
  };
}
