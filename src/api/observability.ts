/**
 * @module api/observability
 * The API's part in issue #16: a middleware that times every request into
 * `quiver_http_request_duration_seconds` (by method, route pattern — never the raw path — and
 * status) and, when tracing is on, makes it a SERVER span continued from the W3C `traceparent`
 * header; `GET /metrics` (Prometheus text; a key with the `metrics` scope unless
 * `QUIVER_METRICS=open`, 404 when `off`); and `GET /readyz` (200 when the database answers,
 * the migrations are applied and the replica is not draining, else 503).
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { ErrorCodes, QuiverError } from '../core/errors.ts';
import type { Telemetry } from '../telemetry/index.ts';
import { PROMETHEUS_CONTENT_TYPE, errorCodeOf } from '../telemetry/index.ts';
import { SpanKind, carrierFrom, continueTrace, inSpan, tracingActive } from '../telemetry/tracing/spans.ts';
import { principalWith, type ApiEnv } from './http.ts';
import type { OpenApiPaths } from './openapi.ts';

/** What the API needs of the app's telemetry. */
export type ApiTelemetry = Pick<Telemetry, 'observeHttp' | 'renderMetrics' | 'readiness' | 'settings'>;

/** Probe and scrape paths: timed, never traced (they would drown the traces). */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/** The route pattern that answered, bounded: unmatched paths share one label. */
function routeOf(c: Context<ApiEnv>): string {
  let route: string;
  try {
    route = routePath(c, -1);
  } catch {
    return 'unmatched';
  }
  return route === '*' || route === '/*' || route === '' ? 'unmatched' : route;
}

/** Times every request and, when traced, wraps it in a SERVER span. Install before anything else. */
export function httpTelemetry(telemetry: ApiTelemetry): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      if (!tracingActive() || UNTRACED.has(c.req.path)) {
        await next();
        return;
      }
      const parent = continueTrace(carrierFrom({ traceparent: c.req.header('traceparent'), tracestate: c.req.header('tracestate') }), ROOT_CONTEXT);
      await inSpan(c.req.method, { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path } }, async (span) => {
        await next();
        const route = routeOf(c);
        span?.updateName(`${c.req.method} ${route}`);
        span?.setAttributes({ 'http.route': route, 'http.response.status_code': c.res.status });
      });
    } finally {
      const code = c.error ? errorCodeOf(c.error) : undefined;
      telemetry.observeHttp(c.req.method, routeOf(c), c.res.status, (performance.now() - started) / 1000, code);
    }
  };
}

/** Registers `/metrics` and `/readyz`. */
export function registerObservabilityRoutes(app: Hono<ApiEnv>, telemetry: ApiTelemetry): void {
  app.get('/metrics', (c) => {
    const access = telemetry.settings.metrics;
    if (access === 'off') throw new QuiverError(ErrorCodes.notFound, 'metrics are turned off (QUIVER_METRICS=off)');
    if (access === 'key') principalWith(c, 'metrics');
    return c.body(telemetry.renderMetrics(), 200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
  });
  app.get('/readyz', async (c) => {
    const report = await telemetry.readiness.check();
    return c.json({ status: report.ready ? 'ready' : 'not_ready', ...report }, report.ready ? 200 : 503);
  });
}

/** True when `path` needs no key: `/readyz` always, `/metrics` when metrics are open. */
export function isPublicObservabilityPath(path: string, telemetry: ApiTelemetry | undefined): boolean {
  if (!telemetry) return false;
  return path === '/readyz' || (path === '/metrics' && telemetry.settings.metrics === 'open');
}

/** The OpenAPI description of the probe and metrics paths. */
export const OBSERVABILITY_OPENAPI: OpenApiPaths = {
  '/healthz': { get: { summary: 'Liveness: 200 while the process serves HTTP (no key)', tags: ['operations'] } },
  '/readyz': { get: { summary: 'Readiness: 200 when the database answers, migrations are applied and the replica is not draining; else 503 (no key)', tags: ['operations'] } },
  '/metrics': { get: { summary: 'Prometheus text format 0.0.4 (a key with the metrics scope unless QUIVER_METRICS=open)', tags: ['operations'] } },
};
