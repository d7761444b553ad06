/**
 * @module access/oauth/jwt-verifier
 * Validates JWT access tokens issued by an external authorization server (issue #27; MCP
 * authorization, RFC 9068 profile): the signature against the issuer's JWKS (fetched and
 * cached by `jose`, refetched when an unknown key id appears), the issuer (`iss`, exactly the
 * configured one), the audience (RFC 8707: the token must name this resource; a token for any
 * other resource is refused), expiry and not-before. Only asymmetric algorithms are accepted:
 * Quiver holds no shared secret with the issuer, so an `HS256` or `none` token is a forgery.
 *
 * The JWKS location comes from the issuer's metadata (OpenID discovery, then RFC 8414) unless
 * configured; the metadata's `issuer` must equal the configured one (RFC 8414 §3.3, so a
 * metadata document cannot speak for another issuer). A failed discovery is not cached.
 *
 * Errors never carry the token or its claims: `unauthorized` with a short reason (the
 * `error_description` of the 401), or `unavailable` when the issuer cannot be reached (a client
 * re-authorising would not help, and Quiver fails closed).
 */
import type { createRemoteJWKSet, errors as JoseErrors, jwtVerify, JWTPayload } from 'jose';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';

// jose loads with the first token verified (issue #28: an idle server verifies none); the module
// promise is kept, so later tokens do not go through the module loader again.
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

/** Signature algorithms an access token may use (asymmetric only). */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

/** Options of `createJwtVerifier`. */
export interface JwtVerifierOptions {
  /** The issuer identifier, exactly as the tokens' `iss` carries it. */
  issuer: string;
  /** The JWKS URL; default: `jwks_uri` from the issuer's metadata. */
  jwksUrl?: string | undefined;
  /** The keys themselves (Quiver's own authorization server): no JWKS is fetched. */
  keys?: (() => Promise<Parameters<typeof jwtVerify>[1]>) | undefined;
  /** Leeway for `exp` / `nbf`, seconds (default 5). */
  clockToleranceSeconds?: number | undefined;
  /** The fetch used for metadata discovery (tests, proxies); default global fetch. */
  fetch?: typeof fetch | undefined;
  /** The current time (tests); default the clock. */
  now?: (() => Date) | undefined;
}

/** Verifies access tokens for a given audience. */
export interface JwtVerifier {
  /** The claims of a valid token for `audience`; throws `unauthorized` (or `unavailable`). */
  verify(token: string, audience: string): Promise<JWTPayload>;
}

/** True when `text` has the shape of a JWS compact serialisation (three base64url parts). */
export function looksLikeJwt(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text);
}

function refused(reason: string): QuiverError {
  return new QuiverError(ErrorCodes.unauthorized, reason);
}

/** The metadata URLs to try for an issuer: OpenID discovery, then RFC 8414 (path inserted after the host). */
export function issuerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

async function discoverJwksUrl(issuer: string, fetchImpl: typeof fetch): Promise<URL> {
  const failures: string[] = [];
  for (const candidate of issuerMetadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetchImpl(candidate, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      failures.push(`${candidate}: ${(error as Error).message}`);
      continue;
    }
    if (!response.ok) {
      failures.push(`${candidate}: HTTP ${response.status}`);
      continue;
    }
    const metadata = (await response.json().catch(() => undefined)) as { issuer?: unknown; jwks_uri?: unknown } | undefined;
    if (metadata?.issuer !== issuer) {
      // RFC 8414 §3.3: metadata that names another issuer must not be used.
      throw new QuiverError(ErrorCodes.unavailable, `the metadata at ${candidate} names issuer '${String(metadata?.issuer)}', not the configured '${issuer}'`);
    }
    if (typeof metadata.jwks_uri !== 'string') throw new QuiverError(ErrorCodes.unavailable, `the metadata at ${candidate} has no jwks_uri`);
    return new URL(metadata.jwks_uri);
  }
  throw new QuiverError(ErrorCodes.unavailable, `cannot read the authorization server metadata of ${issuer} (${failures.join('; ')})`);
}

/** Maps a `jose` failure to Quiver's refusal; never includes the token. */
function toRefusal(error: unknown, joseErrors: typeof JoseErrors): QuiverError {
  if (error instanceof QuiverError) return error;
  if (error instanceof joseErrors.JWTExpired) return refused('the access token has expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return refused('the access token is not for this resource (audience mismatch, RFC 8707)');
    if (error.claim === 'iss') return refused('the access token was not issued by the configured authorization server');
    if (error.claim === 'nbf') return refused('the access token is not valid yet');
    return refused(`the access token's '${error.claim}' claim is not acceptable`);
  }
  if (error instanceof joseErrors.JWKSTimeout) return new QuiverError(ErrorCodes.unavailable, 'the authorization server keys (JWKS) did not arrive in time', { cause: error });
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return refused('the access token is signed with an algorithm Quiver does not accept');
  if (error instanceof joseErrors.JOSEError) return refused('the access token is invalid (signature, key or format)');
  // A network failure while fetching keys: the issuer is unreachable, the token may be fine.
  return new QuiverError(ErrorCodes.unavailable, `cannot fetch the authorization server keys: ${(error as Error).message}`, { cause: error });
}

/** Creates a verifier for tokens of one issuer. */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const fetchImpl = options.fetch ?? fetch;
  const tolerance = options.clockToleranceSeconds ?? 5;
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  function keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    keys ??= (options.jwksUrl ? Promise.resolve(new URL(options.jwksUrl)) : discoverJwksUrl(options.issuer, fetchImpl))
      .then(async (url) => (await loadJose()).createRemoteJWKSet(url, { timeoutDuration: 10_000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }))
      .catch((error: unknown) => {
        keys = undefined; // try discovery again on the next token
        throw error;
      });
    return keys;
  }

  return {
    async verify(token, audience) {
      if (!looksLikeJwt(token)) throw refused('the access token is not a JWT');
      const { errors: joseErrors, jwtVerify } = await loadJose();
      try {
        const { payload } = await jwtVerify(token, options.keys ? await options.keys() : await keySet(), {
          issuer: options.issuer,
          audience,
          algorithms: [...ACCEPTED_ALGORITHMS],
          clockTolerance: tolerance,
          requiredClaims: ['exp', 'sub'],
          ...(options.now ? { currentDate: options.now() } : {}),
        });
        return payload;
      } catch (error) {
        throw toRefusal(error, joseErrors);
      }
    },
  };
}
