/**
 * @module api/routes/plugins/health
 * Plugin health (runtime issue "Health"): per plugin its live process state, breakers, crash
 * loops and persisted call aggregates, and per tool the call aggregates of one plugin. A hub
 * wired without a health source answers 503 `unavailable`. A tenant key sees the plugins and
 * the tools it may see, no others.
 */
import type { Hono } from 'hono';
import { ErrorCodes, QuiverError } from '../../../core/errors.ts';
import { healthQuerySchema, type PluginHealthSource } from '../../../plugins/health.ts';
import { principalWith, readQuery, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

/** `GET /api/v1/plugins/health` and `GET /api/v1/plugins/:id/calls`. */
export function healthRoutes({ visibility }: PluginRouteParts, source: PluginHealthSource | undefined): ApiRouteModule {
  /** The health source, or `unavailable` when this hub was wired without one. */
  const health = (): PluginHealthSource => {
    if (source === undefined) throw new QuiverError(ErrorCodes.unavailable, 'plugin health is not wired into this hub');
    return source;
  };
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins/health', async (c) => {
        const visible = await visibility.pluginNames(c);
        const query = readQuery(c, healthQuerySchema);
        return c.json(await health().report({ window: query.window, visible }));
      });
      app.get('/api/v1/plugins/:id/calls', async (c) => {
        const reference = await visibility.plugin(c);
        const query = readQuery(c, healthQuerySchema);
        const report = await health().toolCalls(reference, { window: query.window });
        // A tenant sees the calls of the tools it can see (as `/tools` lists them), no others.
        const names = await visibility.toolNames(principalWith(c, 'read'), reference);
        if (names === undefined) return c.json(report);
        return c.json({ ...report, tools: report.tools.filter((t) => names.has(t.toolName)) });
      });
    },
    openapi: {
      '/api/v1/plugins/health': {
        get: {
          summary: 'Per plugin: status, live process health (state, pids, breakers, crash loop, score, p50/p95) and persisted call aggregates over ?window= (default 1h)',
          tags: ['plugins'],
          parameters: [{ name: 'window', in: 'query' }],
        },
      },
      '/api/v1/plugins/:id/calls': {
        get: { summary: "Per-tool call aggregates of a plugin over ?window= (default 1h; e.g. 15m, 24h, 7d)", tags: ['plugins'], parameters: [{ name: 'window', in: 'query' }] },
      },
    },
  };
}
