/**
 * @module api/app
 * The HTTP API as a Web-standard Hono app: request ids, a body-size limit, API-key
 * authentication, refusal of NUL bytes in paths and queries, and one error mapping
 * (`{error: {code, message, details}}`). Route modules plug in as `ApiRouteModule`s; the app
 * never knows how services are built.
 * Tests call `app.request()` with no server.
 */
import { Hono, type Context } from 'hono';
import { randomUUID } from 'node:crypto';
import { QuiverError, ErrorCodes, toQuiverError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { ApiKeyService } from '../access/api-keys.ts';
import type { Authenticator } from '../access/oauth/bearer-authenticator.ts';
import { assertSafeRequestTarget, statusForCode, type ApiEnv } from './http.ts';
import { requestBodyLimit } from './body-limit.ts';
import { buildOpenApiDocument, type OpenApiPaths } from './openapi.ts';
import { QUIVER_VERSION } from '../core/version.ts';
import { bearerChallenge, forbiddenChallenge, type ChallengeParameters } from '../core/bearer-challenge.ts';
import { OBSERVABILITY_OPENAPI, httpTelemetry, isPublicObservabilityPath, registerObservabilityRoutes, type ApiTelemetry } from './observability.ts';

/** A group of routes with its OpenAPI description. */
export interface ApiRouteModule {
  /** Registers the routes on the app. */
  register(app: Hono<ApiEnv>): void;
  /** The OpenAPI fragment for these routes. */
  openapi: OpenApiPaths;
  /** Larger body limits for particular paths (exact match), e.g. bulk sync payloads. */
  bodyLimits?: Record<string, number>;
  /** Error bodies of particular paths (exact match) in their own protocol, e.g. JSON-RPC on `/mcp`. */
  errorBodies?: Record<string, (error: { code: string; message: string }) => unknown>;
  /** Paths anyone may read without a key (exact match), e.g. OAuth metadata. */
  publicPaths?: readonly string[];
}

export interface CreateApiOptions {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  /** Resolves credentials (API keys and OAuth access tokens, issue #27); default: `apiKeys` alone. */
  authenticator?: Authenticator;
  /** Extra parameters of every 401 challenge for a request (the protected resource metadata URL). */
  challenge?: (request: Request) => ChallengeParameters;
  modules: ApiRouteModule[];
  logger?: Logger;
  version?: string;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Request metrics and spans, `/metrics` and `/readyz` (issue #16); absent: none of them. */
  telemetry?: ApiTelemetry;
}

/** The key a request presents: a bearer token, else the `x-api-key` header. */
function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  return authorization?.match(/^Bearer\s+(\S+)$/i)?.[1] ?? apiKeyHeader;
}

/**
 * Sets a header on a route's finished response in place. Hono's `c.header` after `next()` copies
 * the response (`new Response(res.body, res)`): reading `body` turns @hono/node-server's
 * lightweight response (a string it writes with the headers) into a web stream it then pumps
 * to the socket, on every request: 3.8 % of the main thread under 150 MCP sessions, and what
 * undid the whole answers of `gateway/session-post-lane` (issue #28). A response whose headers
 * are immutable (e.g. `Response.redirect()`) still gets Hono's copy.
 */
function setFinishedHeader(c: Context<ApiEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/** Paths anyone may read without a key. */
const PUBLIC_PATHS = new Set(['/healthz', '/openapi.json']);

/** Builds the API app. */
export function createApi(options: CreateApiOptions): Hono<ApiEnv> {
  const logger = options.logger ?? silentLogger;
  const app = new Hono<ApiEnv>();
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const authenticator: Authenticator = options.authenticator ?? { authenticate: (presented) => options.apiKeys.authenticate(presented) };
  const publicPaths = new Set([...PUBLIC_PATHS, ...options.modules.flatMap((module) => module.publicPaths ?? [])]);
  // First, so refusals (401, 413) are timed and a request's span is the parent of all its work.
  if (options.telemetry) app.use('*', httpTelemetry(options.telemetry));

  app.use('*', async (c, next) => {
    c.set('requestId', c.req.header('x-request-id') ?? randomUUID());
    await next();
    setFinishedHeader(c, 'x-request-id', c.get('requestId'));
  });

  const limitFor = (maxSize: number) =>
    requestBodyLimit({
      maxSize,
      onError: () => {
        throw new QuiverError(ErrorCodes.payloadTooLarge, `request body is larger than ${maxSize} bytes`);
      },
    });
  const defaultLimit = limitFor(maxBodyBytes);
  const pathLimits = new Map<string, ReturnType<typeof limitFor>>();
  for (const module of options.modules) {
    for (const [path, bytes] of Object.entries(module.bodyLimits ?? {})) pathLimits.set(path, limitFor(bytes));
  }
  app.use('*', (c, next) => (pathLimits.get(c.req.path) ?? defaultLimit)(c, next));

  app.use('*', async (c, next) => {
    // The admin UI's static files are public; every API call it makes carries the key.
    if (publicPaths.has(c.req.path) || isPublicObservabilityPath(c.req.path, options.telemetry) || c.req.path === '/ui' || c.req.path.startsWith('/ui/')) return next();
    c.set('principal', await authenticator.authenticate(presentedKey(c.req.header('authorization'), c.req.header('x-api-key')), c.req.raw));
    await next();
  });

  // Bad text in the path or query is refused for every route and scope (issue #18, finding 7);
  // JSON bodies get the same check in readJson.
  app.use('*', async (c, next) => {
    assertSafeRequestTarget(c.req.url);
    await next();
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  if (options.telemetry) registerObservabilityRoutes(app, options.telemetry);

  const fragments: OpenApiPaths[] = options.telemetry ? [OBSERVABILITY_OPENAPI] : [];
  for (const module of options.modules) {
    module.register(app);
    fragments.push(module.openapi);
  }
  // Built on the first request, not at start (issue #28): turning every route's zod schemas
  // into JSON Schema took ~0.1 s of `quiver serve`'s way to ready.
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  app.get('/openapi.json', (c) => c.json((document ??= buildOpenApiDocument(options.version ?? QUIVER_VERSION, fragments))));

  app.notFound((c) => c.json({ error: { code: ErrorCodes.notFound, message: `no route for ${c.req.method} ${c.req.path}` } }, 404));

  const errorBodies = new Map<string, NonNullable<ApiRouteModule['errorBodies']>[string]>();
  for (const module of options.modules) for (const [path, body] of Object.entries(module.errorBodies ?? {})) errorBodies.set(path, body);

  app.onError((error, c) => {
    const quiverError = toQuiverError(error);
    const status = statusForCode(quiverError.code);
    const ownBody = errorBodies.get(c.req.path);
    if (quiverError.kind === 'unexpected') {
      logger.error({ err: error, requestId: c.get('requestId'), path: c.req.path }, 'request failed');
      if (ownBody) return c.json(ownBody({ code: ErrorCodes.internal, message: 'internal error' }), 500);
      return c.json({ error: { code: ErrorCodes.internal, message: 'internal error', details: { requestId: c.get('requestId') } } }, 500);
    }
    logger.debug({ code: quiverError.code, path: c.req.path }, quiverError.message);
    // RFC 6750 §3: every 401 says how to authenticate, and whether the key sent was the problem.
    if (status === 401) {
      const presented = presentedKey(c.req.header('authorization'), c.req.header('x-api-key')) !== undefined;
      c.header('WWW-Authenticate', bearerChallenge(presented, quiverError.message, options.challenge?.(c.req.raw)));
    }
    // A token that is valid but may not do this (an organisation not admitted) names where to get another (MCP authorization).
    if (status === 403 && options.challenge) c.header('WWW-Authenticate', forbiddenChallenge(quiverError.message, options.challenge(c.req.raw)));
    if (ownBody) return c.json(ownBody({ code: quiverError.code, message: quiverError.message }), status);
    return c.json({ error: quiverError.toJSON() }, status);
  });

  return app;
}
