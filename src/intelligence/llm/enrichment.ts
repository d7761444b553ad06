/**
 * @module intelligence/llm/enrichment
 * LLM enrichment of one tool (issue #14, seed 000 §3.3 "LLM Enrichment"): the prompt, the
 * validation of the reply and the retry. The model is asked for capabilities, use cases,
 * anti-patterns, `llmNotes` and 10–20 example requests written as a user would type them (they
 * feed retrieval's example field and Tool2Vec). A reply that is not JSON or breaks the schema is
 * sent back with what was wrong, at most `maxAttempts` times in all; then the enrichment is
 * rejected with the last errors. The input is the tool as the other sources described it.
 */
import { z } from 'zod';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import { formatIssues } from '../../core/validation.ts';
import type { ChatClient, ChatMessage } from './client.ts';

/** Changes when the prompt or the schema changes, so cached replies of an older prompt are not reused. */
export const PROMPT_VERSION = 'pid-enrich-1';

const sentence = z.string().trim().min(3).max(500);

/** What the model must reply for one tool. */
export const enrichmentSchema = z.object({
  capabilities: z.array(sentence).min(1).max(5),
  useCases: z.array(z.object({ scenario: sentence, example: sentence.optional() })).max(5).default([]),
  antiPatterns: z.array(sentence).max(5).default([]),
  llmNotes: z.string().trim().min(3).max(2_000),
  exampleRequests: z
    .array(z.string().trim().min(3).max(300))
    .min(10)
    .max(20)
    .refine((requests) => new Set(requests.map((request) => request.toLowerCase())).size === requests.length, 'example requests must differ from each other'),
});
export type Enrichment = z.output<typeof enrichmentSchema>;

/** The tool as the model sees it: what the other sources said. */
export interface EnrichmentInput {
  plugin: string;
  pluginContext: string[];
  tool: { name: string; description?: unknown; inputSchema?: unknown; llmNotes?: unknown; sideEffects?: unknown; examples?: unknown };
}

const SYSTEM_PROMPT = [
  'You write metadata that helps an AI agent decide when to call a tool.',
  'Reply with one JSON object and nothing else, with these keys:',
  '"capabilities": 1-5 short action phrases of what the tool does;',
  '"useCases": 0-5 objects {"scenario", "example"} of situations that call for it;',
  '"antiPatterns": 0-5 situations where the tool must NOT be used;',
  '"llmNotes": guidance for the agent (preconditions, what it returns, how it fails);',
  '"exampleRequests": 10-20 different requests a user would type to an assistant that this tool answers,',
  'in plain user language, without the tool name, varied in wording and detail.',
].join(' ');

/** The first messages of an enrichment. */
export function enrichmentMessages(input: EnrichmentInput): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify({ plugin: input.plugin, pluginContext: input.pluginContext, tool: input.tool }) },
  ];
}

/** Parses and validates a reply; returns the errors when it is not acceptable. */
export function parseEnrichment(content: string): { value: Enrichment } | { errors: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return { errors: ['the reply is not a JSON object'] };
  }
  const parsed = enrichmentSchema.safeParse(json);
  if (!parsed.success) return { errors: formatIssues(parsed.error).map((issue) => `${issue.path || '(root)'}: ${issue.message}`) };
  return { value: parsed.data };
}

/** The reply and the tokens every attempt used. */
export interface EnrichmentResult {
  enrichment: Enrichment;
  attempts: number;
  promptTokens: number;
  completionTokens: number;
}

/** Asks the model, re-asking with the errors while the reply is invalid; throws `upstream_error` after `maxAttempts`. */
export async function enrichTool(client: ChatClient, input: EnrichmentInput, maxAttempts = 3): Promise<EnrichmentResult> {
  const messages = enrichmentMessages(input);
  let promptTokens = 0;
  let completionTokens = 0;
  let errors: string[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const reply = await client.complete(messages);
    promptTokens += reply.promptTokens;
    completionTokens += reply.completionTokens;
    const parsed = parseEnrichment(reply.content);
    if ('value' in parsed) return { enrichment: parsed.value, attempts: attempt, promptTokens, completionTokens };
    errors = parsed.errors;
    messages.push({ role: 'assistant', content: reply.content.slice(0, 20_000) });
    messages.push({ role: 'user', content: `That reply is invalid: ${errors.slice(0, 10).join('; ')}. Reply again with only the corrected JSON object.` });
  }
  throw new QuiverError(ErrorCodes.upstreamError, `LLM enrichment of tool '${input.tool.name}' gave invalid output ${maxAttempts} times: ${errors.slice(0, 5).join('; ')}`, {
    details: { tool: input.tool.name, errors, promptTokens, completionTokens },
  });
}
