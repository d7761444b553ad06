/**
 * @module plugins/intelligence
 * Plugin Intelligence Documents as the plugins service handles them (seed 000 §3, §6.2, §6.3):
 * generating one from what the catalog knows (the seed's "generation pipeline", with MCP
 * discovery plus the manifest as the source), scoring a validation, and the fielded text a
 * PID is searched by. Pure functions; storage is `store/repositories/plugins.ts`.
 */
import { contentHash } from '../core/hash.ts';
import type { PluginManifest } from '../core/manifest.ts';
import { validatePid, type PidValidationResult } from '../core/pid.ts';
import type { ToolRecord } from '../core/tool.ts';

/** The PID schema version Quiver writes (seed 000 Appendix A: "1.0"). */
export const PID_SCHEMA_VERSION = '1.0';

/** Inputs of `generatePid`. */
export interface GeneratePidInput {
  pluginName: string;
  manifest?: PluginManifest | undefined;
  description?: string | undefined;
  /** The plugin's live catalog tools. */
  tools: readonly ToolRecord[];
}

const firstSentence = (text: string): string => {
  const trimmed = text.trim();
  const match = /^(.{12,300}?[.!?])(\s|$)/s.exec(trimmed);
  return (match?.[1] ?? trimmed.slice(0, 300)).replace(/\s+/g, ' ');
};

const unique = (texts: readonly string[]): string[] => {
  const seen = new Set<string>();
  return texts.filter((text) => {
    const key = text.trim().toLowerCase();
    if (key === '' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** Side effects implied by MCP tool annotations (readOnlyHint / destructiveHint / openWorldHint). */
function sideEffectsOf(annotations: Record<string, unknown>): string[] {
  const effects: string[] = [];
  if (annotations['readOnlyHint'] === true) return effects;
  if (annotations['destructiveHint'] === true) effects.push('destructive: may delete or overwrite data');
  else if (annotations['readOnlyHint'] === false || annotations['destructiveHint'] === false) effects.push('writes: changes state');
  if (annotations['openWorldHint'] === true) effects.push('external: reaches systems outside the plugin');
  return effects;
}

/**
 * Builds a PID from the catalog's tools and the manifest: capabilities from the tools'
 * descriptions, use cases from `whenToUse` and the manifest examples, anti-patterns from
 * `whenNotToUse`, related concepts from tags; tool definitions carry the schemas, tags,
 * few-shot examples and the side effects MCP annotations imply.
 */
export function generatePid(input: GeneratePidInput): Record<string, unknown> {
  const { manifest } = input;
  const tools = [...input.tools].sort((a, b) => a.name.localeCompare(b.name));
  const useCases = [
    ...(manifest?.whenToUse ?? []).map((scenario) => ({ scenario })),
    ...(manifest?.examples ?? []).map((example) => ({ scenario: `Call ${example.tool}`, example: example.user })),
  ];
  const semantic: Record<string, unknown> = {
    capabilities: unique(tools.filter((tool) => tool.description.trim() !== '').map((tool) => firstSentence(tool.description))),
    useCases,
    antiPatterns: unique(manifest?.whenNotToUse ?? []),
    domainContext: unique([manifest?.summary ?? input.description ?? ''].filter((text) => text.trim() !== '')),
    relatedConcepts: unique([...(manifest?.tags ?? []), ...(manifest?.category === undefined ? [] : [manifest.category])]),
  };
  return {
    version: PID_SCHEMA_VERSION,
    pluginId: input.pluginName,
    semantic,
    tools: tools.map((tool) => {
      const fewShot = Array.isArray(tool.metadata['fewShotExamples']) ? (tool.metadata['fewShotExamples'] as Array<Record<string, unknown>>) : [];
      const definition: Record<string, unknown> = {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters,
        semanticTags: tool.tags.slice(0, 100),
        examples: fewShot.map((example) => ({
          input: example['args'] !== null && typeof example['args'] === 'object' ? example['args'] : {},
          ...(typeof example['user'] === 'string' ? { description: example['user'] } : {}),
        })),
        sideEffects: sideEffectsOf(tool.annotations),
      };
      if (tool.returnSchema !== null) definition['outputSchema'] = tool.returnSchema;
      if (typeof tool.metadata['llmNotes'] === 'string') definition['llmNotes'] = tool.metadata['llmNotes'];
      return definition;
    }),
  };
}

/** How a validation is stored: status, a 0–100 score, and the hash of the document. */
export interface PidAssessment {
  validation: PidValidationResult;
  status: 'valid' | 'valid_with_warnings' | 'invalid';
  /** 0 when invalid; else 100 less 5 per warning (at least 50). */
  score: number;
  contentHash: string;
}

/** Validates a PID for a plugin against its registered tools and scores it. */
export function assessPid(document: unknown, options: { pluginName: string; registeredTools: readonly string[] }): PidAssessment {
  const validation = validatePid(document, options);
  const status = !validation.valid ? 'invalid' : validation.warnings.length > 0 ? 'valid_with_warnings' : 'valid';
  const score = !validation.valid ? 0 : Math.max(50, 100 - 5 * validation.warnings.length);
  return { validation, status, score, contentHash: contentHash(document) };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap((entry) =>
        typeof entry === 'string'
          ? [entry]
          : entry !== null && typeof entry === 'object'
            ? Object.values(entry as Record<string, unknown>).filter((v): v is string => typeof v === 'string')
            : [],
      )
    : [];

/** The fielded text of a PID for lexical search: [plugin, semantic, tool names, tool text, tags]. */
export function pidSearchFields(pluginName: string, pid: Record<string, unknown>): string[] {
  const semantic = (pid['semantic'] ?? {}) as Record<string, unknown>;
  const tools = Array.isArray(pid['tools']) ? (pid['tools'] as Array<Record<string, unknown>>) : [];
  return [
    pluginName,
    [...strings(semantic['capabilities']), ...strings(semantic['useCases']), ...strings(semantic['domainContext'])].join('\n'),
    tools.map((tool) => String(tool['name'] ?? '')).join(' '),
    tools.map((tool) => [tool['description'], tool['llmNotes']].filter((t) => typeof t === 'string').join(' ')).join('\n'),
    [...strings(semantic['relatedConcepts']), ...tools.flatMap((tool) => strings(tool['semanticTags']))].join(' '),
  ];
}

/** BM25F weights of `pidSearchFields`. */
export const PID_SEARCH_FIELDS = [
  { weight: 2, b: 0.3 },
  { weight: 1.5, b: 0.75 },
  { weight: 2, b: 0.5 },
  { weight: 1, b: 0.75 },
  { weight: 1, b: 0.5 },
] as const;
