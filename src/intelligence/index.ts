/**
 * @module intelligence
 * Plugin Intelligence Documents that write themselves (issue #14, seed 000 §3.3): sources
 * (author, MCP discovery, zod, TypeScript, OpenAPI, LLM), a precedence merge with provenance,
 * a deterministic content hash over the sources' inputs, LLM enrichment with a reply cache,
 * and a diff for review.
 */
export { parseSources } from './source-choice.ts';
export { createPidGenerationService, type PidGenerationService, type PidGenerationOptions, type GenerateOptions, type GenerationReport, type StalenessReport, type AcceptReport, type ReviewOptions, type AcceptanceStatus } from './service.ts';
export { createChatClient, type ChatClient, type ChatClientSettings } from './llm/client.ts';
export { diffDocuments, type DocumentChange } from './diff.ts';
export type { GenerationRecord } from './repository.ts';
export { SOURCE_PRECEDENCE, SELECTABLE_SOURCES, DEFAULT_SOURCES, type LlmUsage, type Provenance, type SourceName } from './types.ts';
