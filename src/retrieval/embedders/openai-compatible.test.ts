import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatibleEmbedder } from './openai-compatible.ts';
import { isQuiverError } from '../../core/errors.ts';

type Handler = (body: { model: string; input: string[]; dimensions?: number }, request: IncomingMessage, response: ServerResponse) => void;

/** A local server speaking the OpenAI /embeddings wire format; each test scripts its answers. */
describe('OpenAI-compatible embedder (local /embeddings server)', () => {
  let server: Server;
  let baseURL: string;
  let handlers: Handler[] = [];
  let requests: { body: { model: string; input: string[]; dimensions?: number }; authorization: string | undefined; path: string }[] = [];
  const secret = 'sk-test-SECRET-123';

  const vectorFor = (text: string, dims: number): number[] => Array.from({ length: dims }, (_, i) => ((text.length + i) % 7) + 1);
  const ok: Handler = (body, _request, response) => {
    const dims = body.dimensions ?? 4;
    response.writeHead(200, { 'content-type': 'application/json' });
    // Reversed order on purpose: clients must use `index`, not position.
    const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, dims) })).reverse();
    response.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 3, total_tokens: 3 } }));
  };

  before(async () => {
    server = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk) => (raw += chunk));
      request.on('end', () => {
        const body = JSON.parse(raw) as { model: string; input: string[] };
        requests.push({ body, authorization: request.headers.authorization, path: request.url ?? '' });
        const handler = handlers.shift() ?? ok;
        handler(body, request, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    handlers = [];
    requests = [];
  });

  const make = (extra: Partial<Parameters<typeof createOpenAICompatibleEmbedder>[0]> = {}) =>
    createOpenAICompatibleEmbedder({ baseURL, model: 'text-embedding-test', apiKey: secret, retryBaseDelayMs: 5, timeoutMs: 2_000, ...extra });

  it('embeds in batches, orders by index, normalises, and sends the key only as a bearer token', async () => {
    const embedder = make({ maxBatchSize: 2, dimensions: 4 });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    assert.equal(vectors.length, 3);
    assert.equal(requests.length, 2);
    assert.deepEqual(requests[0]!.body.input, ['a', 'bb']);
    assert.equal(requests[0]!.body.dimensions, 4);
    assert.equal(requests[0]!.path, '/v1/embeddings');
    assert.equal(requests[0]!.authorization, `Bearer ${secret}`);
    const expected = vectorFor('bb', 4);
    const norm = Math.hypot(...expected);
    vectors[1]!.forEach((value, i) => assert.ok(Math.abs(value - expected[i]! / norm) < 1e-6));
    assert.equal(embedder.dimensions, 4);
    assert.match(embedder.modelId, /^openai-compatible:127\.0\.0\.1:\d+\/text-embedding-test@4$/);
  });

  it('learns the dimensions from the first response when not configured', async () => {
    const embedder = make();
    assert.equal(embedder.dimensions, 0);
    await embedder.embed(['x']);
    assert.equal(embedder.dimensions, 4);
    assert.equal(requests[0]!.body.dimensions, undefined);
  });

  it('retries 429 and 5xx with backoff, honouring Retry-After', async () => {
    handlers = [
      (_b, _r, response) => {
        response.writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'slow down' } }));
      },
      (_b, _r, response) => {
        response.writeHead(503);
        response.end('busy');
      },
    ];
    const vectors = await make().embed(['hello']);
    assert.equal(vectors.length, 1);
    assert.equal(requests.length, 3);
  });

  it('gives up after maxRetries with the last error', async () => {
    handlers = Array.from({ length: 3 }, () => ((_b: unknown, _r: unknown, response: ServerResponse) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'internal failure' } }));
    }) as Handler);
    await assert.rejects(make({ maxRetries: 2 }).embed(['x']), (error) => {
      assert.ok(isQuiverError(error, 'unavailable'));
      assert.match(error.message, /HTTP 500\): internal failure \(after 3 attempts\)/);
      return true;
    });
  });

  it('fails at once on a 4xx with the server message, never echoing the key', async () => {
    handlers = [
      (_b, _r, response) => {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${secret}` } }));
      },
    ];
    await assert.rejects(make().embed(['x']), (error) => {
      assert.ok(isQuiverError(error, 'unauthorized'));
      assert.match(error.message, /HTTP 401/);
      assert.ok(!error.message.includes(secret));
      return true;
    });
    assert.equal(requests.length, 1);
    handlers = [
      (_b, _r, response) => {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'model not found' } }));
      },
    ];
    await assert.rejects(make().embed(['x']), /refused \(HTTP 400\): model not found/);
  });

  it('rejects malformed responses', async () => {
    const cases: Handler[] = [
      (_b, _r, response) => response.end('not json'),
      (_b, _r, response) => response.end(JSON.stringify({ data: [{ embedding: 'nope', index: 0 }] })),
      (_b, _r, response) => response.end(JSON.stringify({ data: [{ embedding: [1, 2], index: 5 }] })),
      (b, _r, response) => response.end(JSON.stringify({ data: [{ embedding: [1, 2, 3, 4], index: 0 }], model: b.model })),
    ];
    const messages = [/not JSON/, /malformed embedding response.*data\.0\.embedding/, /bad index 5/, /1 vectors for 2 inputs/];
    for (let i = 0; i < cases.length; i++) {
      handlers = [cases[i]!];
      await assert.rejects(make().embed(i === 3 ? ['a', 'b'] : ['a']), messages[i]!);
    }
    handlers = [(_b, _r, response) => response.end(JSON.stringify({ data: [{ embedding: [1, 2, 3], index: 0 }] }))];
    await assert.rejects(make({ dimensions: 4 }).embed(['a']), /3 dimensions, expected 4/);
  });

  it('times out slow answers, retries them, and reports a timeout', async () => {
    handlers = Array.from({ length: 2 }, () => ((_b: unknown, _r: unknown, response: ServerResponse) => {
      // Answers far later than the timeout; unref'd, so a pending answer does not hold the file open.
      setTimeout(() => {
        if (!response.destroyed) response.end('{}');
      }, 5_000).unref();
    }) as Handler);
    const started = Date.now();
    await assert.rejects(make({ timeoutMs: 100, maxRetries: 1 }).embed(['x']), (error) => {
      assert.ok(isQuiverError(error, 'timeout'));
      assert.match(error.message, /timed out after 100 ms \(after 2 attempts\)/);
      return true;
    });
    // Given up long before the answers (2 × 100 ms and a backoff): a loaded machine (CI runs 2.4×
    // slower than a quiet one) must not turn this into a timing test, so the bound is generous.
    assert.ok(Date.now() - started < 4_000, 'did not wait for the slow answers');
    assert.equal(requests.length, 2);
  });

  it('stops when the caller aborts', async () => {
    handlers = [(_b, _r, response) => setTimeout(() => !response.destroyed && response.end('{}'), 1_000)];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await assert.rejects(make().embed(['x'], { signal: controller.signal }), /caller gave up/);
  });

  it('reports an unreachable server and refuses bad settings', async () => {
    const closed = createOpenAICompatibleEmbedder({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0 });
    await assert.rejects(closed.embed(['x']), (error) => isQuiverError(error, 'unavailable') && /failed/.test(error.message));
    assert.throws(() => createOpenAICompatibleEmbedder({ baseURL: 'not a url', model: 'm' }), /is not a URL/);
    assert.throws(() => createOpenAICompatibleEmbedder({ baseURL: 'ftp://x', model: 'm' }), /must be http/);
    assert.throws(() => createOpenAICompatibleEmbedder({ baseURL: baseURL, model: 'm', dimensions: -1 }), /positive integer/);
  });
});
