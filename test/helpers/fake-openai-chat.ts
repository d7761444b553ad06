/**
 * @module test/helpers/fake-openai-chat
 * A local server speaking the OpenAI chat completions wire format (`POST /v1/chat/completions`
 * → `{id, object: 'chat.completion', choices: [{message}], usage}`), for the LLM enrichment
 * tests: a remote model cannot run here. Its behaviour is switched per test: valid
 * enrichments (built from the tool in the request, so they differ per tool), invalid output,
 * invalid once then valid, a 500, or no answer at all (a timeout). Every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeChatMode = 'valid' | 'invalid' | 'invalid-once' | 'error-500' | 'hang';

/** A running fake. */
export interface FakeOpenAIChat {
  /** Base URL to configure (`…/v1`). */
  baseUrl: string;
  mode: FakeChatMode;
  /** Parsed request bodies, in order. */
  requests: Array<{ model: string; messages: Array<{ role: string; content: string }> }>;
  close(): Promise<void>;
}

const words = (text: string): string[] => text.toLowerCase().replace(/[^a-z0-9 ]+/g, ' ').split(/\s+/).filter((word) => word.length > 2);

/** A valid enrichment for the tool described in the request: example requests a user might type. */
export function validEnrichmentFor(tool: { name: string; description?: unknown }): Record<string, unknown> {
  const description = typeof tool.description === 'string' && tool.description.trim() !== '' ? tool.description.trim() : tool.name.replace(/_/g, ' ');
  const topic = words(description).slice(0, 6).join(' ') || tool.name;
  const openers = ['Can you', 'Please', 'I need to', 'Help me', 'Could you', 'I want to', 'Quickly', 'Go ahead and', 'Would you', 'Time to', 'Let us', 'Try to'];
  const tails = ['for me', 'now', 'right away', 'today', 'please', 'if possible', 'again', 'once more', 'for this project', 'when you can', 'here', 'as usual'];
  return {
    capabilities: [description.slice(0, 200)],
    useCases: [{ scenario: `The user wants to ${topic}`, example: `${openers[0]} ${topic}?` }],
    antiPatterns: [`Questions unrelated to ${topic}`],
    llmNotes: `Use for requests about ${topic}.`,
    exampleRequests: openers.map((opener, index) => `${opener} ${topic} ${tails[index]}`),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function completion(model: string, content: string): Record<string, unknown> {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 },
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

/** Starts the fake on 127.0.0.1 (a free port). */
export async function startFakeOpenAIChat(mode: FakeChatMode = 'valid'): Promise<FakeOpenAIChat> {
  const hanging = new Set<ServerResponse>();
  let invalidServed = false;
  const fake: FakeOpenAIChat = { baseUrl: '', mode, requests: [], close: async () => undefined };
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') return reply(response, 404, { error: { message: 'not found' } });
    const body = JSON.parse(await readBody(request)) as FakeOpenAIChat['requests'][number];
    fake.requests.push(body);
    const user = body.messages.find((message) => message.role === 'user');
    const tool = (JSON.parse(user?.content ?? '{}') as { tool?: { name: string; description?: unknown } }).tool ?? { name: 'tool' };
    switch (fake.mode) {
      case 'hang':
        hanging.add(response);
        return;
      case 'error-500':
        return reply(response, 500, { error: { message: 'the model is overloaded' } });
      case 'invalid':
        return reply(response, 200, completion(body.model, JSON.stringify({ capabilities: [], exampleRequests: ['only one'] })));
      case 'invalid-once':
        if (!invalidServed) {
          invalidServed = true;
          return reply(response, 200, completion(body.model, 'Sure! Here are some ideas for this tool.'));
        }
        return reply(response, 200, completion(body.model, JSON.stringify(validEnrichmentFor(tool))));
      default:
        return reply(response, 200, completion(body.model, JSON.stringify(validEnrichmentFor(tool))));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    for (const response of hanging) response.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}
