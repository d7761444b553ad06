/**
 * @module openapi/request
 * Tool arguments → an HTTP request, following OpenAPI 3 parameter serialization (§4.8.12.4
 * style values): path `simple` / `label` / `matrix`, query `form` / `spaceDelimited` /
 * `pipeDelimited` / `deepObject`, header `simple`, cookie `form`; bodies as JSON, form
 * (urlencoded or multipart) or text. Path values are percent-encoded (a value of `..` or
 * `a/b` cannot change the path), and the URL always stays under the base URL.
 */
import { invalidInput } from '../core/errors.ts';
import type { AppliedCredentials } from './security.ts';
import type { OpenApiToolDefinition, ParameterBinding } from './types.ts';

/** A request ready for fetch. */
export interface BuiltRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: string | FormData | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Percent-encodes a path value; dots are encoded too, so `.` and `..` stay literal segments. */
function encodePathValue(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/** `simple` / `label` / `matrix` serialization of a path or header value (already encoded by `encode`). */
function styled(binding: ParameterBinding, value: unknown, encode: (text: string) => string): string {
  const { style, explode, name } = binding;
  const separator = style === 'label' ? (explode ? '.' : ',') : style === 'matrix' ? (explode ? `;${name}=` : ',') : ',';
  let text: string;
  if (Array.isArray(value)) text = value.map((item) => encode(scalar(item))).join(separator);
  else if (isObject(value)) {
    const pairs = Object.entries(value).map(([key, item]) => (explode ? `${encode(key)}=${encode(scalar(item))}` : `${encode(key)},${encode(scalar(item))}`));
    text = pairs.join(explode ? (style === 'matrix' ? ';' : separator) : ',');
  } else text = encode(scalar(value));
  if (style === 'label') return `.${text}`;
  if (style === 'matrix') return isObject(value) && explode ? `;${text}` : `;${name}=${text}`;
  return text;
}

/** Query pairs of one parameter. */
function queryPairs(binding: ParameterBinding, value: unknown): Array<[string, string]> {
  const { name, style, explode } = binding;
  if (Array.isArray(value)) {
    if (explode && style === 'form') return value.map((item) => [name, scalar(item)]);
    const joiner = style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ',';
    return [[name, value.map(scalar).join(joiner)]];
  }
  if (isObject(value)) {
    if (style === 'deepObject') return Object.entries(value).map(([key, item]) => [`${name}[${key}]`, scalar(item)]);
    if (explode) return Object.entries(value).map(([key, item]) => [key, scalar(item)]);
    return [[name, Object.entries(value).flatMap(([key, item]) => [key, scalar(item)]).join(',')]];
  }
  return [[name, scalar(value)]];
}

/** The request URL: the base URL's path, then the operation's path with its parameters filled in. */
function buildUrl(baseUrl: URL, tool: OpenApiToolDefinition, args: Record<string, unknown>): URL {
  const byName = new Map(tool.operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p]));
  const path = tool.operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const binding = byName.get(name);
    const value = binding === undefined ? undefined : args[binding.property];
    if (value === undefined || value === null || value === '') throw invalidInput(`missing required path parameter '${binding?.property ?? name}'`);
    return styled(binding!, value, encodePathValue);
  });
  const url = new URL(baseUrl.href);
  url.pathname = `${baseUrl.pathname.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
  url.search = '';
  url.hash = '';
  return url;
}

/** The request body in its media type. */
function buildBody(mediaType: string, value: unknown, headers: Headers): string | FormData {
  if (/json/i.test(mediaType)) {
    headers.set('content-type', mediaType);
    return JSON.stringify(value);
  }
  if (/^application\/x-www-form-urlencoded/i.test(mediaType)) {
    if (!isObject(value)) throw invalidInput('a form body must be an object of fields');
    const form = new URLSearchParams();
    for (const [key, item] of Object.entries(value)) for (const part of Array.isArray(item) ? item : [item]) form.append(key, scalar(part));
    headers.set('content-type', 'application/x-www-form-urlencoded');
    return form.toString();
  }
  if (/^multipart\/form-data/i.test(mediaType)) {
    if (!isObject(value)) throw invalidInput('a multipart body must be an object of fields');
    // fetch writes the content type with its boundary.
    const form = new FormData();
    for (const [key, item] of Object.entries(value)) for (const part of Array.isArray(item) ? item : [item]) form.append(key, scalar(part));
    return form;
  }
  headers.set('content-type', mediaType);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Builds the HTTP request of one tool call; throws `invalid_input` for a missing required argument. */
export function buildRequest(baseUrl: URL, tool: OpenApiToolDefinition, args: Record<string, unknown>, credentials: AppliedCredentials): BuiltRequest {
  const url = buildUrl(baseUrl, tool, args);
  const headers = new Headers({ accept: 'application/json, */*;q=0.8' });
  const cookies: string[] = [];
  for (const binding of tool.operation.parameters) {
    const value = args[binding.property];
    if (value === undefined) {
      if (binding.required) throw invalidInput(`missing required ${binding.in} parameter '${binding.property}'`);
      continue;
    }
    if (binding.in === 'query') for (const [key, item] of queryPairs(binding, value)) url.searchParams.append(key, item);
    else if (binding.in === 'header') headers.set(binding.name, styled({ ...binding, style: 'simple' }, value, (text) => text));
    else if (binding.in === 'cookie') cookies.push(`${binding.name}=${encodeURIComponent(scalar(value))}`);
  }
  for (const [key, item] of credentials.query) url.searchParams.append(key, item);
  for (const [key, item] of credentials.cookies) cookies.push(`${key}=${encodeURIComponent(item)}`);
  for (const [key, item] of Object.entries(credentials.headers)) headers.set(key, item);
  if (cookies.length > 0) headers.set('cookie', cookies.join('; '));
  const bodyBinding = tool.operation.body;
  let body: string | FormData | undefined;
  const bodyValue = bodyBinding === undefined ? undefined : args[bodyBinding.property];
  if (bodyBinding !== undefined && bodyValue !== undefined) body = buildBody(bodyBinding.mediaType, bodyValue, headers);
  else if (bodyBinding?.required) throw invalidInput(`missing required request body '${bodyBinding.property}'`);
  return { url, method: tool.operation.method.toUpperCase(), headers, body };
}
