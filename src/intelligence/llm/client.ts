/**
 * @module intelligence/llm/client
 * A chat client for any OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, Ollama,
 * vLLM, LiteLLM…), in the style of the embedder (retrieval/embedders/openai-compatible.ts):
 * every attempt has a timeout, 5xx answers and dropped connections are retried once, other
 * answers fail at once with the server's message, and the response is validated. The API key
 * travels in the Authorization header only and never appears in an error or a log line.
 */
import { z } from 'zod';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';

/** Settings of the chat client. */
export interface ChatClientSettings {
  /** API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Per-attempt timeout in milliseconds (default 60 000). */
  timeoutMs?: number | undefined;
  /** Retries after a 5xx answer or a dropped connection (default 1). */
  maxTransportRetries?: number | undefined;
  fetch?: typeof globalThis.fetch;
}

/** One chat message. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The reply text and the tokens the endpoint reported. */
export interface ChatReply {
  content: string;
  promptTokens: number;
  completionTokens: number;
}

/** A chat completion endpoint. */
export interface ChatClient {
  readonly model: string;
  complete(messages: readonly ChatMessage[]): Promise<ChatReply>;
}

const responseSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }).passthrough() }).passthrough()).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).passthrough().optional(),
});

const errorBodySchema = z.object({ error: z.union([z.object({ message: z.string() }).passthrough(), z.string()]) }).passthrough();

async function serverMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) return typeof parsed.data.error === 'string' ? parsed.data.error : parsed.data.error.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}

/** Creates a chat client; throws `invalid_config` when the base URL is not a URL. */
export function createChatClient(settings: ChatClientSettings): ChatClient {
  let url: URL;
  try {
    url = new URL(`${settings.baseUrl.replace(/\/+$/, '')}/chat/completions`);
  } catch {
    throw new QuiverError(ErrorCodes.config, `LLM base URL '${settings.baseUrl}' is not a URL`);
  }
  const fetchImpl = settings.fetch ?? globalThis.fetch;
  const timeoutMs = settings.timeoutMs ?? 60_000;
  const retries = settings.maxTransportRetries ?? 1;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (settings.apiKey) headers['authorization'] = `Bearer ${settings.apiKey}`;

  async function attempt(body: string): Promise<ChatReply> {
    let response: Response;
    try {
      response = await fetchImpl(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      throw new QuiverError(timedOut ? ErrorCodes.timeout : ErrorCodes.unavailable, timedOut ? `the LLM endpoint did not answer within ${timeoutMs} ms` : `the LLM endpoint could not be reached (${(error as Error).message})`, { details: { retryable: !timedOut } });
    }
    if (!response.ok) {
      const message = await serverMessage(response);
      throw new QuiverError(ErrorCodes.upstreamError, `the LLM endpoint answered ${response.status}: ${message}`, { details: { status: response.status, retryable: response.status >= 500 } });
    }
    const parsed = responseSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new QuiverError(ErrorCodes.upstreamError, 'the LLM endpoint answered with something that is not a chat completion');
    return {
      content: parsed.data.choices[0]!.message.content ?? '',
      promptTokens: parsed.data.usage?.prompt_tokens ?? 0,
      completionTokens: parsed.data.usage?.completion_tokens ?? 0,
    };
  }

  return {
    model: settings.model,
    async complete(messages) {
      const body = JSON.stringify({ model: settings.model, messages, temperature: 0, response_format: { type: 'json_object' } });
      for (let tried = 0; ; tried++) {
        try {
          return await attempt(body);
        } catch (error) {
          const retryable = error instanceof QuiverError && (error.details as { retryable?: boolean } | undefined)?.retryable === true;
          if (!retryable || tried >= retries) throw error;
        }
      }
    },
  };
}
