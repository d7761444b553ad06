/**
 * @module api/routes/plugins/intelligence
 * The Plugin Intelligence Document endpoints of seed 000 §6.3: generate, read, replace, export
 * every document, and search them. A tenant key reads only the documents of plugins it may see,
 * with their tool definitions cut to the tools it may see.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { IntelligenceRecord } from '../../../store/repositories/plugins.ts';
import type { Principal } from '../../../access/api-keys.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

const searchQuerySchema = z.object({ q: z.string().min(1).max(500), limit: z.coerce.number().int().min(1).max(100).default(10) });

/** A PID with its tool definitions cut to `names` (a document without a tool list is unchanged). */
export function withToolsOnly(record: IntelligenceRecord, names: ReadonlySet<string>): IntelligenceRecord {
  const tools = record.pid['tools'];
  if (!Array.isArray(tools)) return record;
  const kept = tools.filter((tool: unknown) => {
    const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
    return typeof name === 'string' && names.has(name);
  });
  return { ...record, pid: { ...record.pid, tools: kept } };
}

/** Routes of the intelligence documents; the static paths come first so `intelligence` is never read as a plugin id. */
export function intelligenceRoutes({ plugins, visibility }: PluginRouteParts): ApiRouteModule {
  /** A PID as the caller may read it. */
  async function intelligenceFor(principal: Principal, record: IntelligenceRecord): Promise<IntelligenceRecord> {
    const names = await visibility.toolNames(principal, record.pluginName);
    return names === undefined ? record : withToolsOnly(record, names);
  }
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins/intelligence/export', async (c) => {
        const visible = await visibility.pluginNames(c);
        const documents = await plugins.exportIntelligence();
        if (visible === undefined) return c.json({ documents });
        const principal = principalWith(c, 'read');
        const shown = documents.filter((d) => visible.has(d.pluginName));
        return c.json({ documents: await Promise.all(shown.map((d) => intelligenceFor(principal, d))) });
      });
      app.get('/api/v1/plugins/intelligence/search', async (c) => {
        const visible = await visibility.pluginNames(c);
        const query = readQuery(c, searchQuerySchema);
        const results = await plugins.searchIntelligence(query.q, query.limit);
        if (visible === undefined) return c.json({ results });
        const principal = principalWith(c, 'read');
        const shown = results.filter((r) => visible.has(r.plugin));
        return c.json({ results: await Promise.all(shown.map(async (r) => ({ ...r, document: await intelligenceFor(principal, r.document) }))) });
      });
      app.post('/api/v1/plugins/:id/intelligence', async (c) => {
        principalWith(c, 'admin');
        return c.json(await plugins.generateIntelligence(c.req.param('id')), 201);
      });
      app.get('/api/v1/plugins/:id/intelligence', async (c) => {
        return c.json(await intelligenceFor(principalWith(c, 'read'), await plugins.getIntelligence(await visibility.plugin(c))));
      });
      app.put('/api/v1/plugins/:id/intelligence', async (c) => {
        principalWith(c, 'admin');
        const document = await readJson(c, z.record(z.string(), z.unknown()), 'intelligence document');
        return c.json(await plugins.putIntelligence(c.req.param('id'), document));
      });
    },
    openapi: {
      '/api/v1/plugins/:id/intelligence': {
        post: { summary: 'Generate a PID from the catalog tools and manifest (seed 000 §6.3)', tags: ['intelligence'], responses: { '201': 'Generated' } },
        get: { summary: 'Retrieve the PID', tags: ['intelligence'] },
        put: { summary: 'Replace the PID (validated; hard errors are rejected with the full list)', tags: ['intelligence'] },
      },
      '/api/v1/plugins/intelligence/export': { get: { summary: 'Batch export of every PID', tags: ['intelligence'] } },
      '/api/v1/plugins/intelligence/search': {
        get: { summary: 'Lexical search over PIDs', tags: ['intelligence'], parameters: [{ name: 'q', in: 'query', required: true }] },
      },
    },
  };
}
