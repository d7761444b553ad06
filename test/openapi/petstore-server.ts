/**
 * @module test/openapi/petstore-server
 * A REST server written for the tests, implementing the 20 operations of the committed Swagger
 * Petstore document (`test/fixtures/openapi/petstore.yaml`) over an in-memory store, with the
 * document's security: `api_key` (header) for getPetById and getInventory, `petstore_auth`
 * (an OAuth2 access token, sent as a bearer token) for the other pet operations. A wrong or
 * missing credential gets 401. Every request is recorded, so tests can check what arrived.
 * Given a document, it also serves it at `/openapi.json` (a spec fetched by URL).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a test configures and observes. */
export interface PetstoreServer {
  /** The API root, e.g. `http://127.0.0.1:PORT/v2`. */
  baseUrl: string;
  requests: Array<{ method: string; path: string; query: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
type Handler = (context: { params: Record<string, string>; query: URLSearchParams; body: string; headers: IncomingMessage['headers'] }) => [number, unknown] | [number, unknown, Record<string, string>];

function json(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** Starts the server on 127.0.0.1 with the given credentials. */
export async function startPetstore(credentials: { apiKey: string; accessToken: string }, options: { document?: string } = {}): Promise<PetstoreServer> {
  const pets = new Map<number, Json>();
  const orders = new Map<number, Json>();
  const users = new Map<string, Json>();
  const images: Json[] = [];
  let nextPet = 1;
  const requests: PetstoreServer['requests'] = [];
  const apiKey = (headers: IncomingMessage['headers']) => headers['api_key'] === credentials.apiKey;
  const oauth = (headers: IncomingMessage['headers']) => headers['authorization'] === `Bearer ${credentials.accessToken}`;
  const denied: [number, unknown] = [401, { code: 401, type: 'error', message: 'unauthorized' }];
  const petOr404 = (id: string): [number, unknown] => (pets.has(Number(id)) ? [200, pets.get(Number(id))] : [404, { code: 404, type: 'error', message: 'Pet not found' }]);

  const routes: Array<[string, RegExp, 'api_key' | 'oauth' | 'none', Handler]> = [
    ['POST', /^\/pet$/, 'oauth', ({ body }) => {
      const pet = json(body) as Json;
      const id = nextPet++;
      pets.set(id, { ...pet, id });
      return [200, pets.get(id)];
    }],
    ['PUT', /^\/pet$/, 'oauth', ({ body }) => {
      const pet = json(body) as Json;
      if (!pets.has(Number(pet['id']))) return [404, { message: 'Pet not found' }];
      pets.set(Number(pet['id']), pet);
      return [200, pet];
    }],
    ['GET', /^\/pet\/findByStatus$/, 'oauth', ({ query }) => [200, [...pets.values()].filter((pet) => query.getAll('status').includes(String(pet['status'])))]],
    ['GET', /^\/pet\/findByTags$/, 'oauth', ({ query }) => [200, [...pets.values()].filter((pet) => ((pet['tags'] as Json[] | undefined) ?? []).some((tag) => query.getAll('tags').includes(String(tag['name']))))]],
    ['GET', /^\/pet\/(?<petId>\d+)$/, 'api_key', ({ params }) => petOr404(params['petId']!)],
    ['POST', /^\/pet\/(?<petId>\d+)$/, 'oauth', ({ params, body, headers }) => {
      if (!String(headers['content-type']).startsWith('application/x-www-form-urlencoded')) return [415, { message: 'form expected' }];
      const form = new URLSearchParams(body);
      const pet = pets.get(Number(params['petId']));
      if (!pet) return [404, { message: 'Pet not found' }];
      if (form.has('name')) pet['name'] = form.get('name');
      if (form.has('status')) pet['status'] = form.get('status');
      return [200, pet];
    }],
    ['DELETE', /^\/pet\/(?<petId>\d+)$/, 'oauth', ({ params }) => (pets.delete(Number(params['petId'])) ? [200, { code: 200, type: 'ok', message: 'deleted' }] : [404, { message: 'Pet not found' }])],
    ['POST', /^\/pet\/(?<petId>\d+)\/uploadImage$/, 'oauth', ({ params, body, headers }) => {
      if (!String(headers['content-type']).startsWith('multipart/form-data')) return [415, { message: 'multipart expected' }];
      images.push({ petId: Number(params['petId']), bytes: body.length });
      const metadata = /name="additionalMetadata"\r\n\r\n([^\r]*)/.exec(body)?.[1] ?? '';
      return [200, { code: 200, type: 'upload', message: `stored image for pet ${params['petId']}: ${metadata}` }];
    }],
    ['GET', /^\/store\/inventory$/, 'api_key', () => {
      const counts: Record<string, number> = {};
      for (const pet of pets.values()) counts[String(pet['status'])] = (counts[String(pet['status'])] ?? 0) + 1;
      return [200, counts];
    }],
    ['POST', /^\/store\/order$/, 'none', ({ body }) => {
      const order = json(body) as Json;
      orders.set(Number(order['id']), order);
      return [200, order];
    }],
    ['GET', /^\/store\/order\/(?<orderId>\d+)$/, 'none', ({ params }) => (orders.has(Number(params['orderId'])) ? [200, orders.get(Number(params['orderId']))] : [404, { message: 'Order not found' }])],
    ['DELETE', /^\/store\/order\/(?<orderId>\d+)$/, 'none', ({ params }) => (orders.delete(Number(params['orderId'])) ? [200, {}] : [404, { message: 'Order not found' }])],
    ['POST', /^\/user$/, 'none', ({ body }) => {
      const user = json(body) as Json;
      users.set(String(user['username']), user);
      return [200, user];
    }],
    ['POST', /^\/user\/createWith(Array|List)$/, 'none', ({ body }) => {
      for (const user of json(body) as Json[]) users.set(String(user['username']), user);
      return [200, { code: 200, message: `${users.size} users` }];
    }],
    ['GET', /^\/user\/login$/, 'none', ({ query }) => {
      const user = users.get(query.get('username') ?? '');
      if (!user || user['password'] !== query.get('password')) return [400, { message: 'Invalid username/password supplied' }];
      return [200, `logged in user session:${query.get('username')}`, { 'x-rate-limit': '5000' }];
    }],
    ['GET', /^\/user\/logout$/, 'none', () => [200, { message: 'ok' }]],
    ['GET', /^\/user\/(?<username>[^/]+)$/, 'none', ({ params }) => {
      const user = users.get(decodeURIComponent(params['username']!));
      return user ? [200, user] : [404, { message: 'User not found' }];
    }],
    ['PUT', /^\/user\/(?<username>[^/]+)$/, 'none', ({ params, body }) => {
      const name = decodeURIComponent(params['username']!);
      if (!users.has(name)) return [404, { message: 'User not found' }];
      users.set(name, json(body) as Json);
      return [200, users.get(name)];
    }],
    ['DELETE', /^\/user\/(?<username>[^/]+)$/, 'none', ({ params }) => (users.delete(decodeURIComponent(params['username']!)) ? [200, {}] : [404, { message: 'User not found' }])],
  ];

  const handle = (request: IncomingMessage, response: ServerResponse, body: string): void => {
    const url = new URL(request.url!, 'http://petstore');
    requests.push({ method: request.method!, path: url.pathname, query: url.search, headers: request.headers, body });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
    };
    if (url.pathname === '/openapi.json' && options.document !== undefined) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(options.document);
      return;
    }
    if (!url.pathname.startsWith('/v2/')) return send(404, { message: 'no such API' });
    const path = url.pathname.slice(3);
    for (const [method, pattern, security, handler] of routes) {
      const match = pattern.exec(path);
      if (request.method !== method || !match) continue;
      if ((security === 'api_key' && !apiKey(request.headers)) || (security === 'oauth' && !oauth(request.headers))) return send(...denied);
      const [status, payload, headers] = handler({ params: match.groups ?? {}, query: url.searchParams, body, headers: request.headers });
      return send(status, payload, headers);
    }
    send(405, { message: `no route for ${request.method} ${path}` });
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
