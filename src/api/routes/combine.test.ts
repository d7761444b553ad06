/**
 * Route groups combined into one module: registered in the order given (the first matching
 * handler answers), OpenAPI paths merged per method, body limits kept, and a second description
 * of one operation or limit refused at assembly.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import type { ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';
import { isQuiverError } from '../../core/errors.ts';
import { combineRouteModules } from './combine.ts';

function group(path: string, answer: string, extra: Partial<ApiRouteModule> = {}): ApiRouteModule {
  return {
    register(app) {
      app.get(path, (c) => c.text(answer));
    },
    openapi: { [path]: { get: { summary: answer } } },
    ...extra,
  };
}

describe('combineRouteModules', () => {
  it('registers the groups in the order given, so a static path listed first wins over a parameter path', async () => {
    const app = new Hono<ApiEnv>();
    combineRouteModules([group('/things/health', 'static'), group('/things/:id', 'param')]).register(app);
    assert.equal(await (await app.request('/things/health')).text(), 'static');
    assert.equal(await (await app.request('/things/other')).text(), 'param');

    const reversed = new Hono<ApiEnv>();
    combineRouteModules([group('/things/:id', 'param'), group('/things/health', 'static')]).register(reversed);
    assert.equal(await (await reversed.request('/things/health')).text(), 'param');
  });

  it('merges the OpenAPI paths (methods of one path from several groups) and the body limits', () => {
    const post: ApiRouteModule = {
      register() {},
      openapi: { '/things/:id': { post: { summary: 'change' } } },
      bodyLimits: { '/things/bulk': 4096 },
    };
    const combined = combineRouteModules([group('/things', 'list'), group('/things/:id', 'show'), post]);
    assert.deepEqual(combined.openapi, {
      '/things': { get: { summary: 'list' } },
      '/things/:id': { get: { summary: 'show' }, post: { summary: 'change' } },
    });
    assert.deepEqual(combined.bodyLimits, { '/things/bulk': 4096 });
    assert.equal(combineRouteModules([group('/things', 'list')]).bodyLimits, undefined);
  });

  it('refuses two groups describing one operation or limiting one path', () => {
    const internal = (error: unknown) => isQuiverError(error) && error.code === 'internal' && /GET \/things/.test(error.message);
    assert.throws(() => combineRouteModules([group('/things', 'a'), group('/things', 'b')]), internal);
    const limited = (bytes: number) => group('/x', 'x', { openapi: {}, bodyLimits: { '/things': bytes } });
    assert.throws(
      () => combineRouteModules([limited(1), limited(2)]),
      (error: unknown) => isQuiverError(error) && error.code === 'internal' && /body limit for \/things/.test(error.message),
    );
  });
});
