/**
 * @module openapi/security
 * Security schemes (OpenAPI Security Scheme Object) and how a plugin's secrets satisfy them.
 * A plugin secret is named after the scheme, else a generic name for its kind:
 *
 * | scheme kind                         | secret (per scheme, e.g. scheme `petstore_auth`)   | generic fallback                      |
 * |-------------------------------------|----------------------------------------------------|---------------------------------------|
 * | http bearer, oauth2, openIdConnect  | `OPENAPI_PETSTORE_AUTH_TOKEN`                      | `OPENAPI_BEARER_TOKEN`                |
 * | http basic                          | `OPENAPI_<SCHEME>_USERNAME`, `_PASSWORD`           | `OPENAPI_USERNAME`, `OPENAPI_PASSWORD`|
 * | apiKey (header, query or cookie)    | `OPENAPI_<SCHEME>_KEY`                             | `OPENAPI_API_KEY`                     |
 *
 * OAuth2 flows are not run by Quiver: the secret is an access token obtained elsewhere.
 * An operation's `security` lists alternatives; the first one whose secrets are all set is used.
 */
import type { SecurityScheme } from './types.ts';
import { followRef } from './refs.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const SCHEME_TYPES = new Set(['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS']);

/** The schemes under `components.securitySchemes`; unusable ones are reported in `warnings`. */
export function readSecuritySchemes(document: Json, warnings: string[]): Record<string, SecurityScheme> {
  const components = isObject(document['components']) ? document['components'] : {};
  const raw = isObject(components['securitySchemes']) ? components['securitySchemes'] : {};
  const schemes: Record<string, SecurityScheme> = {};
  for (const [name, entry] of Object.entries(raw)) {
    const scheme = followRef(document, entry);
    if (!isObject(scheme) || typeof scheme['type'] !== 'string' || !SCHEME_TYPES.has(scheme['type'])) {
      warnings.push(`security scheme '${name}' has no known type; ignored`);
      continue;
    }
    const type = scheme['type'] as SecurityScheme['type'];
    const location = scheme['in'];
    if (type === 'apiKey' && (typeof scheme['name'] !== 'string' || !['header', 'query', 'cookie'].includes(String(location)))) {
      warnings.push(`apiKey scheme '${name}' needs 'name' and 'in' (header, query or cookie); ignored`);
      continue;
    }
    schemes[name] = {
      name,
      type,
      ...(typeof scheme['scheme'] === 'string' ? { scheme: scheme['scheme'].toLowerCase() } : {}),
      ...(type === 'apiKey' ? { in: location as 'header' | 'query' | 'cookie', parameterName: scheme['name'] as string } : {}),
      ...(typeof scheme['description'] === 'string' ? { description: scheme['description'] } : {}),
    };
  }
  return schemes;
}

/** An operation's (or the document's) security requirements as alternatives of scheme names. */
export function securityAlternatives(requirements: unknown, schemes: Record<string, SecurityScheme>, tool: string, warnings: string[]): string[][] {
  if (!Array.isArray(requirements)) return [];
  const alternatives: string[][] = [];
  for (const requirement of requirements) {
    if (!isObject(requirement)) continue;
    const names = Object.keys(requirement);
    const unknown = names.filter((name) => schemes[name] === undefined);
    if (unknown.length > 0) {
      warnings.push(`tool '${tool}' names unknown security scheme${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; that alternative is ignored`);
      continue;
    }
    alternatives.push(names);
  }
  // Every alternative unusable: fail closed (the API would refuse an anonymous call anyway).
  if (alternatives.length === 0 && requirements.length > 0) return [['(unknown scheme)']];
  return alternatives;
}

/** The environment-style fragment of a scheme name: `petstore-auth` → `PETSTORE_AUTH`. */
function schemeSlug(name: string): string {
  return name.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase() || 'SCHEME';
}

/** The secret names that can satisfy a scheme, per part (`token`, `key`, `username`, `password`), most specific first. */
export function credentialNames(scheme: SecurityScheme): Record<string, string[]> {
  const slug = `OPENAPI_${schemeSlug(scheme.name)}`;
  if (scheme.type === 'apiKey') return { key: [`${slug}_KEY`, 'OPENAPI_API_KEY'] };
  if (scheme.type === 'http' && scheme.scheme === 'basic') {
    return { username: [`${slug}_USERNAME`, 'OPENAPI_USERNAME'], password: [`${slug}_PASSWORD`, 'OPENAPI_PASSWORD'] };
  }
  return { token: [`${slug}_TOKEN`, 'OPENAPI_BEARER_TOKEN'] };
}

/** What authentication adds to a request. */
export interface AppliedCredentials {
  headers: Record<string, string>;
  query: Array<[string, string]>;
  cookies: Array<[string, string]>;
}

function applyScheme(scheme: SecurityScheme, credentials: Record<string, string>, into: AppliedCredentials): string[] {
  if (scheme.type === 'mutualTLS') return [`(mutual TLS scheme '${scheme.name}' is not supported)`];
  const names = credentialNames(scheme);
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const [part, candidates] of Object.entries(names)) {
    const found = candidates.find((candidate) => credentials[candidate] !== undefined && credentials[candidate] !== '');
    if (found === undefined) missing.push(candidates[0]!);
    else values[part] = credentials[found]!;
  }
  if (missing.length > 0) return missing;
  if (scheme.type === 'apiKey') {
    const target = scheme.in === 'query' ? into.query : scheme.in === 'cookie' ? into.cookies : undefined;
    if (target) target.push([scheme.parameterName!, values['key']!]);
    else into.headers[scheme.parameterName!] = values['key']!;
  } else if (scheme.type === 'http' && scheme.scheme === 'basic') {
    into.headers['authorization'] = `Basic ${Buffer.from(`${values['username']}:${values['password']}`).toString('base64')}`;
  } else {
    // bearer, oauth2 and openIdConnect all present an access token; other http schemes send it as is.
    const prefix = scheme.type === 'http' && scheme.scheme !== undefined && scheme.scheme !== 'bearer' ? scheme.scheme[0]!.toUpperCase() + scheme.scheme.slice(1) : 'Bearer';
    into.headers['authorization'] = `${prefix} ${values['token']}`;
  }
  return [];
}

/**
 * Applies the first satisfiable security alternative. Returns the additions, or the secret
 * names that would satisfy the first alternative when none can be met.
 */
export function applyCredentials(
  alternatives: readonly string[][],
  schemes: Record<string, SecurityScheme>,
  credentials: Record<string, string>,
): { applied: AppliedCredentials } | { missing: string[] } {
  if (alternatives.length === 0) return { applied: { headers: {}, query: [], cookies: [] } };
  let firstMissing: string[] | undefined;
  for (const alternative of alternatives) {
    const applied: AppliedCredentials = { headers: {}, query: [], cookies: [] };
    const missing = alternative.flatMap((name) => (schemes[name] === undefined ? [`(unknown scheme ${name})`] : applyScheme(schemes[name], credentials, applied)));
    if (missing.length === 0) return { applied };
    firstMissing ??= missing;
  }
  return { missing: firstMissing ?? [] };
}
