/**
 * @module core/pid
 * The Plugin Intelligence Document (seed 000 §3.2, Appendix A): five sections — semantic
 * context, tool definitions, execution profile, safety constraints, interoperability — that
 * tell a selecting LLM and the runtime what a plugin is for and how to run it.
 *
 * Leniency (docs/metadata.md): PIDs evolve, so every object keeps unknown keys
 * (`z.looseObject`) and every field Appendix A leaves out is optional. Values the seed fixes
 * are enums (`typicalLatency`); values it leaves open (resource level, concurrency model,
 * data class, audit level, isolation level) accept any string, and `validatePid` warns when
 * one is not a known value, which catches typos without rejecting new vocabulary.
 */
import { z } from 'zod';
import { toolNameSchema } from './name-schemas.ts';
import { jsonSchemaObjectSchema } from './tool.ts';
import { formatIssues } from './validation.ts';

/** Latency buckets (seed 000 §3.2.3 `LatencyBucket`). */
export const LATENCY_BUCKETS = ['instant', 'fast', 'moderate', 'slow'] as const;
/** Known resource levels (`ResourceLevel`; the seed leaves the values open). */
export const RESOURCE_LEVELS = ['low', 'medium', 'high'] as const;
/** Known concurrency models: safe to call in parallel, one call at a time, or exclusive use of the plugin. */
export const CONCURRENCY_MODELS = ['parallel', 'sequential', 'exclusive'] as const;
/** Known data classes (`DataClass`; seed 000 §3.2.4 names PHI). */
export const DATA_CLASSES = ['public', 'internal', 'confidential', 'restricted', 'PII', 'PHI', 'PCI'] as const;
/** Known audit levels (`AuditLevel`; Appendix A uses `full`). */
export const AUDIT_LEVELS = ['none', 'basic', 'standard', 'full'] as const;
/** Known isolation levels, matching the runtime's trust-based isolation (DESIGN §3.6). */
export const ISOLATION_LEVELS = ['none', 'process', 'sandbox', 'container', 'microvm', 'remote'] as const;

/** Bounds outside which a timeout recommendation is almost certainly a unit mistake. */
export const PID_TIMEOUT_BOUNDS_MS = { min: 100, max: 600_000 } as const;

const text = z.string().max(4_000);
const textList = z.array(text).max(200);
const count = z.number().int().min(0);

/** A scenario-based trigger (seed 000 §3.2.1 `UseCaseDefinition`). */
export const useCaseSchema = z.looseObject({
  scenario: z.string().min(1).max(2_000),
  trigger: z.string().max(2_000).optional(),
  example: text.optional(),
});

/** Seed 000 §3.2.1 `SemanticContext`. */
export const semanticContextSchema = z.looseObject({
  capabilities: textList.optional(),
  useCases: z.array(useCaseSchema).max(200).optional(),
  antiPatterns: textList.optional(),
  domainContext: textList.optional(),
  relatedConcepts: textList.optional(),
});

/** One input/output pair of a tool (seed 000 §3.2.2 `ToolExample`, Appendix A). */
export const toolExampleSchema = z.looseObject({
  input: z.record(z.string(), z.unknown()),
  output: z.unknown().optional(),
  description: z.string().max(2_000).optional(),
});

/** What changes after a call (`SideEffect`): a short label, or an object with a `type`. */
export const sideEffectSchema = z.union([
  z.string().min(1).max(2_000),
  z.looseObject({ type: z.string().min(1).max(200), description: z.string().max(2_000).optional() }),
]);

/** Seed 000 §3.2.2 `ToolDefinition`. `name` is the tool's own name, never `plugin__tool`. */
export const toolDefinitionSchema = z.looseObject({
  name: toolNameSchema,
  description: z.string().max(20_000).optional(),
  llmNotes: text.optional(),
  inputSchema: jsonSchemaObjectSchema.optional(),
  outputSchema: jsonSchemaObjectSchema.optional(),
  examples: z.array(toolExampleSchema).max(100).optional(),
  semanticTags: z.array(z.string().min(1).max(100)).max(100).optional(),
  requiredContext: textList.optional(),
  sideEffects: z.array(sideEffectSchema).max(100).optional(),
});

/** Seed 000 §3.2.3 `RetryPolicy` (Appendix A: maxRetries, backoffMs). */
export const retryPolicySchema = z.looseObject({
  maxRetries: count.max(100),
  backoffMs: count.optional(),
  backoffMultiplier: z.number().min(1).max(100).optional(),
  maxBackoffMs: count.optional(),
  retryOn: z.array(z.string().min(1)).optional(),
});

/** Seed 000 §5.2 `CircuitBreakerConfig`; omitted fields take the runtime's defaults. */
export const circuitBreakerConfigSchema = z.looseObject({
  /** Failures before the circuit opens. */
  failureThreshold: count.min(1).optional(),
  /** Successes in half-open state before it closes. */
  successThreshold: count.min(1).optional(),
  /** Milliseconds in the open state. */
  timeout: count.optional(),
  /** Trial requests let through when half-open. */
  halfOpenRequests: count.min(1).optional(),
});

/** Seed 000 §3.2.3 `ExecutionProfile`. */
export const executionProfileSchema = z.looseObject({
  typicalLatency: z.enum(LATENCY_BUCKETS).optional(),
  resourceIntensity: z.string().min(1).max(100).optional(),
  concurrencyModel: z.string().min(1).max(100).optional(),
  /** Milliseconds. */
  timeoutRecommendation: z.number().int().positive().optional(),
  retryPolicy: retryPolicySchema.optional(),
  circuitBreakerConfig: circuitBreakerConfigSchema.optional(),
});

/** `RateLimitConfig`: any subset of the windows; all counts. */
export const rateLimitConfigSchema = z.looseObject({
  requestsPerSecond: z.number().positive().optional(),
  requestsPerMinute: count.optional(),
  requestsPerHour: count.optional(),
  requestsPerDay: count.optional(),
  burst: count.optional(),
  maxConcurrent: count.min(1).optional(),
});

/** `Permission`: a scope string (`patient:read`) or an object naming one. */
export const permissionSchema = z.union([
  z.string().min(1).max(200),
  z.looseObject({ name: z.string().min(1).max(200), description: z.string().max(2_000).optional() }),
]);

/** Seed 000 §3.2.4 `SafetyConstraints`. */
export const safetyConstraintsSchema = z.looseObject({
  requiredPermissions: z.array(permissionSchema).max(200).optional(),
  dataClassification: z.string().min(1).max(100).optional(),
  auditRequirements: z.string().min(1).max(100).optional(),
  rateLimits: rateLimitConfigSchema.optional(),
  isolationLevel: z.string().min(1).max(100).optional(),
});

/** `DataFlowPattern`: a sentence, or an object such as `{from, to, description}`. */
export const dataFlowPatternSchema = z.union([
  z.string().min(1).max(2_000),
  z.looseObject({
    from: z.string().max(200).optional(),
    to: z.string().max(200).optional(),
    description: z.string().max(2_000).optional(),
  }),
]);

/** Seed 000 §3.2.5 `Interoperability`. */
export const interoperabilitySchema = z.looseObject({
  composableWith: textList.optional(),
  conflictsWith: textList.optional(),
  prerequisites: textList.optional(),
  dataFlowPatterns: z.array(dataFlowPatternSchema).max(200).optional(),
});

/** The whole document (seed 000 §3.2, Appendix A). */
export const pluginIntelligenceDocumentSchema = z.looseObject({
  /** Version of the document (Appendix A: "1.0"). */
  version: z.string().min(1).max(100),
  pluginId: z.string().min(1).max(200),
  semantic: semanticContextSchema.optional(),
  tools: z.array(toolDefinitionSchema).max(1_000).optional(),
  execution: executionProfileSchema.optional(),
  safety: safetyConstraintsSchema.optional(),
  interoperability: interoperabilitySchema.optional(),
});

export type UseCaseDefinition = z.output<typeof useCaseSchema>;
export type SemanticContext = z.output<typeof semanticContextSchema>;
export type ToolExample = z.output<typeof toolExampleSchema>;
export type SideEffect = z.output<typeof sideEffectSchema>;
export type ToolDefinition = z.output<typeof toolDefinitionSchema>;
export type RetryPolicy = z.output<typeof retryPolicySchema>;
export type CircuitBreakerConfig = z.output<typeof circuitBreakerConfigSchema>;
export type ExecutionProfile = z.output<typeof executionProfileSchema>;
export type RateLimitConfig = z.output<typeof rateLimitConfigSchema>;
export type SafetyConstraints = z.output<typeof safetyConstraintsSchema>;
export type Interoperability = z.output<typeof interoperabilitySchema>;
export type PluginIntelligenceDocument = z.output<typeof pluginIntelligenceDocumentSchema>;

/** Options of `validatePid`. */
export interface ValidatePidOptions {
  /** The plugin the document is installed for; a different `pluginId` is warned about. */
  pluginName?: string;
  /** Tool names the plugin really registers; definitions of other tools are warned about. */
  registeredTools?: readonly string[];
}

/** `{valid, errors, warnings}` like the manifest's, plus the parsed document when valid. */
export interface PidValidationResult {
  valid: boolean;
  errors: string[];
  warnings: string[];
  pid?: PluginIntelligenceDocument;
}

function isKnown(value: string, known: readonly string[]): boolean {
  const lower = value.toLowerCase();
  return known.some((candidate) => candidate.toLowerCase() === lower);
}

/** Validates a Plugin Intelligence Document, collecting every error (with its path) and warning. */
export function validatePid(document: unknown, options: ValidatePidOptions = {}): PidValidationResult {
  const prefix = options.pluginName === undefined ? 'PID' : `Plugin '${options.pluginName}' PID`;
  const errors: string[] = [];
  const warnings: string[] = [];

  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return { valid: false, errors: [`${prefix} must be a JSON object.`], warnings };
  }
  const parsed = pluginIntelligenceDocumentSchema.safeParse(document);
  if (!parsed.success) {
    for (const issue of formatIssues(parsed.error)) errors.push(`${prefix} field '${issue.path}': ${issue.message}.`);
  }

  // Cross-field rules read the raw document so they report alongside schema errors.
  const raw = document as Record<string, unknown>;
  const record = (value: unknown): Record<string, unknown> | undefined =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

  if (options.pluginName !== undefined && typeof raw['pluginId'] === 'string' && raw['pluginId'] !== options.pluginName) {
    warnings.push(`${prefix} pluginId '${raw['pluginId']}' differs from the plugin name '${options.pluginName}'.`);
  }

  const tools = raw['tools'];
  if (!Array.isArray(tools) || tools.length === 0) {
    if (tools === undefined || Array.isArray(tools)) {
      warnings.push(`${prefix} defines no tools; tool metadata will come from discovery alone.`);
    }
  } else {
    const firstIndex = new Map<string, number>();
    const registered = options.registeredTools === undefined ? undefined : new Set(options.registeredTools);
    tools.forEach((tool: unknown, index) => {
      const definition = record(tool);
      if (definition === undefined) return;
      const name = definition['name'];
      if (typeof name !== 'string') return;
      const first = firstIndex.get(name);
      if (first !== undefined) {
        errors.push(`${prefix} field 'tools.${index}.name': duplicate tool name '${name}' (first defined at tools.${first}).`);
      } else {
        firstIndex.set(name, index);
      }
      const description = definition['description'];
      if (description === undefined || (typeof description === 'string' && description.trim() === '')) {
        warnings.push(`${prefix} tool '${name}' has no description.`);
      }
      if (registered !== undefined && !registered.has(name)) {
        warnings.push(`${prefix} describes tool '${name}', which the plugin does not register; the definition is ignored.`);
      }
    });
  }

  const semantic = record(raw['semantic']);
  if (semantic === undefined || strings(semantic['capabilities']).length === 0) {
    warnings.push(`${prefix} has no semantic.capabilities; they help retrieval find the plugin's tools.`);
  }

  const execution = record(raw['execution']);
  if (execution !== undefined) {
    const timeout = execution['timeoutRecommendation'];
    if (typeof timeout === 'number' && timeout > 0) {
      if (timeout < PID_TIMEOUT_BOUNDS_MS.min) {
        warnings.push(`${prefix} execution.timeoutRecommendation is ${timeout} ms; below ${PID_TIMEOUT_BOUNDS_MS.min} ms — is it in seconds?`);
      } else if (timeout > PID_TIMEOUT_BOUNDS_MS.max) {
        warnings.push(`${prefix} execution.timeoutRecommendation is ${timeout} ms; above ${PID_TIMEOUT_BOUNDS_MS.max} ms (10 minutes) a call is better made a job.`);
      }
    }
    const retry = record(execution['retryPolicy']);
    if (retry !== undefined) {
      if (typeof retry['maxRetries'] === 'number' && retry['maxRetries'] > 10) {
        warnings.push(`${prefix} execution.retryPolicy.maxRetries is ${retry['maxRetries']}; more than 10 retries rarely help.`);
      }
      if (typeof retry['backoffMs'] === 'number' && retry['backoffMs'] > 60_000) {
        warnings.push(`${prefix} execution.retryPolicy.backoffMs is ${retry['backoffMs']} ms; more than a minute between attempts outlasts most callers.`);
      }
    }
    warnUnknown(execution, 'resourceIntensity', RESOURCE_LEVELS, 'execution', prefix, warnings);
    warnUnknown(execution, 'concurrencyModel', CONCURRENCY_MODELS, 'execution', prefix, warnings);
  }

  const safety = record(raw['safety']);
  if (safety !== undefined) {
    warnUnknown(safety, 'dataClassification', DATA_CLASSES, 'safety', prefix, warnings);
    warnUnknown(safety, 'auditRequirements', AUDIT_LEVELS, 'safety', prefix, warnings);
    warnUnknown(safety, 'isolationLevel', ISOLATION_LEVELS, 'safety', prefix, warnings);
  }

  const interoperability = record(raw['interoperability']);
  if (interoperability !== undefined) {
    const conflicts = new Set(strings(interoperability['conflictsWith']));
    for (const name of strings(interoperability['composableWith'])) {
      if (conflicts.has(name)) warnings.push(`${prefix} lists '${name}' in both interoperability.composableWith and conflictsWith.`);
    }
  }

  if (errors.length > 0 || !parsed.success) return { valid: false, errors, warnings };
  return { valid: true, errors, warnings, pid: parsed.data };
}

function warnUnknown(
  section: Record<string, unknown>,
  field: string,
  known: readonly string[],
  sectionName: string,
  prefix: string,
  warnings: string[],
): void {
  const value = section[field];
  if (typeof value === 'string' && value !== '' && !isKnown(value, known)) {
    warnings.push(`${prefix} ${sectionName}.${field} '${value}' is not one of ${known.join(', ')}; it is kept as written.`);
  }
}
