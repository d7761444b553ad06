/**
 * @module retrieval/embedders/openai-compatible
 * An Embedder over any OpenAI-compatible `POST /embeddings` endpoint (OpenAI, Ollama,
 * vLLM, TEI, LiteLLM…). Requests are batched, each attempt has a timeout, 429 and 5xx
 * answers (and dropped connections) are retried with exponential backoff honouring
 * `Retry-After`, other 4xx answers fail at once with the server's message, and every
 * response is validated. The API key is sent in the Authorization header only: it never
 * appears in an error message or a log line.
 */
import { z } from 'zod';
import { QuiverError } from '../../core/errors.ts';
import { formatIssues } from '../../core/validation.ts';
import { batches, normalizeInPlace, type Embedder } from './embedder.ts';

/** Settings of the OpenAI-compatible embedder. */
export interface OpenAICompatibleEmbedderSettings {
  /** API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Model name sent in each request. */
  model: string;
  /** Bearer token; omit for local servers without auth. */
  apiKey?: string | undefined;
  /**
   * Vector size. When given it is sent as `dimensions` (models that support shortening honour
   * it) and checked on every response; when absent it is learned from the first response.
   */
  dimensions?: number | undefined;
  /** Texts per request (default 64). */
  maxBatchSize?: number;
  /** Per-attempt timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Retries after the first attempt on 429 / 5xx / network errors / timeouts (default 3). */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled per retry (default 500). */
  retryBaseDelayMs?: number;
  /** Extra request headers (e.g. an organisation id). */
  headers?: Record<string, string>;
  /** fetch implementation (default the global one). */
  fetch?: typeof globalThis.fetch;
}

const responseSchema = z.object({
  data: z
    .array(
      z.object({
        embedding: z.array(z.number().finite()).min(1),
        index: z.number().int().min(0),
      }),
    )
    .min(1),
  model: z.string().optional(),
  usage: z.object({ prompt_tokens: z.number().optional(), total_tokens: z.number().optional() }).passthrough().optional(),
});

const errorBodySchema = z.object({ error: z.union([z.object({ message: z.string() }).passthrough(), z.string()]) }).passthrough();

const maximumRetryAfterMs = 30_000;

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Creates an Embedder that calls an OpenAI-compatible `/embeddings` endpoint. */
export function createOpenAICompatibleEmbedder(settings: OpenAICompatibleEmbedderSettings): Embedder {
  let url: URL;
  try {
    url = new URL(`${settings.baseURL.replace(/\/+$/, '')}/embeddings`);
  } catch {
    throw new QuiverError('invalid_config', `embedder baseURL '${settings.baseURL}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new QuiverError('invalid_config', `embedder baseURL must be http(s), got ${url.protocol}`);
  }
  if (!settings.model) throw new QuiverError('invalid_config', 'embedder model is required');
  if (settings.dimensions !== undefined && !(Number.isInteger(settings.dimensions) && settings.dimensions > 0)) {
    throw new QuiverError('invalid_config', 'embedder dimensions must be a positive integer');
  }
  const fetchImpl = settings.fetch ?? globalThis.fetch;
  const maxBatchSize = settings.maxBatchSize ?? 64;
  const timeoutMs = settings.timeoutMs ?? 30_000;
  const maxRetries = settings.maxRetries ?? 3;
  const retryBaseDelayMs = settings.retryBaseDelayMs ?? 500;
  let dimensions = settings.dimensions ?? 0;
  const where = `${url.origin}${url.pathname}`;
  // Servers sometimes echo request headers in errors; never let the key through.
  const redact = (text: string): string => (settings.apiKey ? text.split(settings.apiKey).join('***') : text);

  const requestOnce = async (input: readonly string[], signal: AbortSignal | undefined): Promise<Response> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new QuiverError('timeout', `embedding request to ${where} timed out after ${timeoutMs} ms`)), timeoutMs);
    const onAbort = (): void => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await fetchImpl(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...settings.headers,
          ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: settings.model,
          input,
          encoding_format: 'float',
          ...(settings.dimensions !== undefined ? { dimensions: settings.dimensions } : {}),
        }),
        signal: controller.signal,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (controller.signal.aborted && controller.signal.reason instanceof QuiverError) throw controller.signal.reason;
      throw new QuiverError('unavailable', `embedding request to ${where} failed: ${redact((error as Error).message)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  };

  const serverMessage = async (response: Response): Promise<string> => {
    const text = await response.text().catch(() => '');
    let message = text.slice(0, 300);
    try {
      const parsed = errorBodySchema.safeParse(JSON.parse(text));
      if (parsed.success) message = typeof parsed.data.error === 'string' ? parsed.data.error : parsed.data.error.message;
    } catch {
      // Not JSON: keep the text.
    }
    return redact(message.replace(/\s+/g, ' ').trim());
  };

  const embedBatch = async (input: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> => {
    for (let attempt = 0; ; attempt++) {
      let retryAfterMs: number | undefined;
      let failure: QuiverError;
      try {
        const response = await requestOnce(input, signal);
        if (response.ok) {
          let body: unknown;
          try {
            body = await response.json();
          } catch (error) {
            throw new QuiverError('embedder_failed', `embedding response from ${where} is not JSON`, { cause: error, kind: 'operational' });
          }
          const parsed = responseSchema.safeParse(body);
          if (!parsed.success) {
            const issue = formatIssues(parsed.error)[0];
            throw new QuiverError('embedder_failed', `malformed embedding response from ${where}: ${issue ? `${issue.path}: ${issue.message}` : 'invalid'}`, {
              kind: 'operational',
            });
          }
          const vectors: (Float32Array | undefined)[] = new Array(input.length);
          for (const item of parsed.data.data) {
            if (item.index >= input.length || vectors[item.index]) {
              throw new QuiverError('embedder_failed', `malformed embedding response from ${where}: bad index ${item.index}`, { kind: 'operational' });
            }
            if (dimensions === 0) dimensions = item.embedding.length;
            if (item.embedding.length !== dimensions) {
              throw new QuiverError('embedder_failed', `embedding from ${where} has ${item.embedding.length} dimensions, expected ${dimensions}`, {
                kind: 'operational',
              });
            }
            vectors[item.index] = normalizeInPlace(Float32Array.from(item.embedding));
          }
          if (vectors.some((vector) => vector === undefined) || parsed.data.data.length !== input.length) {
            throw new QuiverError('embedder_failed', `embedding response from ${where} has ${parsed.data.data.length} vectors for ${input.length} inputs`, {
              kind: 'operational',
            });
          }
          return vectors as Float32Array[];
        }
        const message = await serverMessage(response);
        const status = response.status;
        if (status !== 429 && status < 500) {
          const code = status === 401 || status === 403 ? 'unauthorized' : 'embedder_failed';
          throw new QuiverError(code, `embedding request to ${where} was refused (HTTP ${status}): ${message || response.statusText}`, {
            kind: 'user',
            details: { status },
          });
        }
        const retryAfter = response.headers.get('retry-after');
        if (retryAfter !== null && /^\d+(\.\d+)?$/.test(retryAfter.trim())) {
          retryAfterMs = Math.min(Number(retryAfter) * 1000, maximumRetryAfterMs);
        }
        failure = new QuiverError(status === 429 ? 'rate_limited' : 'unavailable', `embedding request to ${where} failed (HTTP ${status}): ${message || response.statusText}`, {
          details: { status },
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        if (!(error instanceof QuiverError) || (error.code !== 'timeout' && error.code !== 'unavailable')) throw error;
        failure = error;
      }
      if (attempt >= maxRetries) {
        throw new QuiverError(failure.code, `${failure.message} (after ${attempt + 1} attempts)`, { cause: failure, details: failure.details });
      }
      await sleep(retryAfterMs ?? retryBaseDelayMs * 2 ** attempt, signal);
    }
  };

  return {
    specificationVersion: 'v1',
    provider: 'openai-compatible',
    modelId: `openai-compatible:${url.host}/${settings.model}${settings.dimensions ? `@${settings.dimensions}` : ''}`,
    get dimensions() {
      return dimensions;
    },
    maxBatchSize,
    async embed(texts, options) {
      const result: Float32Array[] = [];
      for (const batch of batches(texts, maxBatchSize)) result.push(...(await embedBatch(batch, options?.signal)));
      return result;
    },
  };
}
