/**
 * @module test/helpers/api
 * One REST request through the API's own `request` (no server): a bearer key, a JSON body when
 * given, and the status with the parsed JSON answer (`{}` for an empty one).
 */

/** What the API tests call (`createApi(...)` has `request`). */
export interface RequestsApi {
  request(path: string, init: RequestInit): Response | Promise<Response>;
}

/** Sends `method path` with `key`; the answer's body typed as the caller expects (`any` by default). */
export async function requestJson<Body = any>(api: RequestsApi, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await api.request(path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Body };
}
