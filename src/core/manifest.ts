/**
 * @module core/manifest
 * PluginManifest (seed 002): the structured metadata a plugin declares about itself, and
 * `validateManifest`, which returns every hard error and soft warning at once.
 *
 * Hard errors (seed 002 "Validation"): schema violations, an empty summary, no whenToUse
 * entry unless the plugin is `silent`, an example naming a tool the plugin does not register.
 * Soft warnings: summary > 120 characters, > 8 whenToUse entries, a whenToUse entry > 100
 * characters, a tag with uppercase letters.
 *
 * Quiver's additions (docs/metadata.md): an example may name its tool by the qualified name
 * of the same plugin (`weather__get_forecast`); it is accepted with a warning and normalised
 * to the bare name. Any other name containing `__` is an error. Unknown fields are dropped
 * with a warning (they are usually typos: `whenToUSe`). Generous size caps (summary ≤ 1,000
 * characters, ≤ 100 entries per list) bound what a plugin can push into the catalog; they
 * mirror the limits of `toolInputSchema`.
 */
import { z } from 'zod';
import { NAME_SEPARATOR, isValidToolName, parseQualifiedName } from './names.ts';
import { formatIssues } from './validation.ts';

/** Grouping labels a manifest may use (seed 002 `category`). */
export const MANIFEST_CATEGORIES = [
  'data',
  'communication',
  'automation',
  'memory',
  'integration',
  'ui',
  'auth',
  'observability',
  'core',
] as const;

/** Discovery and loading modes (seed 002 `visibility`). */
export const MANIFEST_VISIBILITIES = ['always', 'on-demand', 'silent'] as const;

/** Stability hints (seed 002 `stability`). */
export const MANIFEST_STABILITIES = ['stable', 'beta', 'experimental'] as const;

/** Thresholds of the seed's soft rules. */
export const MANIFEST_SOFT_LIMITS = {
  /** A summary is rendered on every turn for `always` plugins (~80 tokens each). */
  summaryChars: 120,
  whenToUseEntries: 8,
  whenToUseEntryChars: 100,
} as const;

export const manifestCategorySchema = z.enum(MANIFEST_CATEGORIES);
export const manifestVisibilitySchema = z.enum(MANIFEST_VISIBILITIES);
export const manifestStabilitySchema = z.enum(MANIFEST_STABILITIES);

const nonBlank = (max: number) =>
  z
    .string()
    .max(max)
    .refine((text) => text.trim().length > 0, 'must not be empty');
const listEntry = z.string().max(2_000);

/** A few-shot example: a user message bound to a tool call (seed 002 `ManifestExample`). */
export const manifestExampleSchema = z.object({
  user: nonBlank(2_000),
  thought: z.string().max(2_000).optional(),
  /** The tool's own name; the same plugin's qualified name is accepted and normalised. */
  tool: nonBlank(200),
  args: z.record(z.string(), z.unknown()).optional(),
});

/** The PluginManifest schema (seed 002 `Type`). Cross-field rules live in `validateManifest`. */
export const pluginManifestSchema = z.object({
  title: nonBlank(200),
  summary: nonBlank(1_000),
  whenToUse: z.array(listEntry).max(100).optional(),
  whenNotToUse: z.array(listEntry).max(100).optional(),
  examples: z.array(manifestExampleSchema).max(100).optional(),
  tags: z.array(z.string().max(100)).max(100).optional(),
  category: manifestCategorySchema.optional(),
  visibility: manifestVisibilitySchema.default('on-demand'),
  stability: manifestStabilitySchema.optional(),
});

export type ManifestExample = z.output<typeof manifestExampleSchema>;
/** A validated manifest (visibility defaulted). */
export type PluginManifest = z.output<typeof pluginManifestSchema>;
/** A manifest as an author writes it. */
export type PluginManifestDraft = z.input<typeof pluginManifestSchema>;

/** Options of `validateManifest`. */
export interface ValidateManifestOptions {
  /** The plugin's name, used in messages and to accept its own qualified tool names. */
  pluginName: string;
  /** Tool names the plugin really registers; when given, every example is checked against them. */
  registeredTools?: readonly string[];
}

/** `{valid, errors, warnings}` as seed 002 defines it, plus the normalised manifest when valid. */
export interface ManifestValidationResult {
  valid: boolean;
  /** Hard violations: the plugin must not load. */
  errors: string[];
  /** Soft violations: logged, the plugin still loads. */
  warnings: string[];
  /** The parsed manifest (defaults applied, example tools as bare names); only when valid. */
  manifest?: PluginManifest;
}

const KNOWN_FIELDS = new Set(Object.keys(pluginManifestSchema.shape));

/**
 * The bare tool name an example's `tool` refers to: the name itself, or the tool part of
 * `<pluginName>__<tool>`. Undefined for another plugin's tool or a malformed name.
 */
export function exampleToolName(pluginName: string, tool: string): string | undefined {
  if (!tool.includes(NAME_SEPARATOR)) return tool;
  const qualified = parseQualifiedName(tool);
  return qualified !== undefined && qualified.plugin === pluginName ? qualified.tool : undefined;
}

/** Validates a manifest against seed 002's hard and soft rules, collecting every problem. */
export function validateManifest(manifest: unknown, options: ValidateManifestOptions): ManifestValidationResult {
  const { pluginName } = options;
  const prefix = `Plugin '${pluginName}' manifest`;
  const errors: string[] = [];
  const warnings: string[] = [];

  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    return { valid: false, errors: [`${prefix} must be a JSON object.`], warnings };
  }
  const raw = manifest as Record<string, unknown>;

  const parsed = pluginManifestSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of formatIssues(parsed.error)) errors.push(`${prefix} field '${issue.path}': ${issue.message}.`);
  }

  for (const key of Object.keys(raw).sort()) {
    if (!KNOWN_FIELDS.has(key)) warnings.push(`${prefix} has unknown field '${key}'; it is ignored.`);
  }

  // The rules below read the raw object defensively so they report even when the schema
  // failed elsewhere: an author fixes everything in one round (seed 002: full error list).
  const visibility = raw['visibility'];
  const whenToUse = raw['whenToUse'];
  if (visibility !== 'silent') {
    const entries = Array.isArray(whenToUse) ? whenToUse : whenToUse === undefined ? [] : undefined;
    if (entries !== undefined && !entries.some((entry) => typeof entry === 'string' && entry.trim() !== '')) {
      errors.push(`${prefix} field 'whenToUse': needs at least 1 entry unless visibility is 'silent'.`);
    }
  }

  const normalisedTools = new Map<number, string>();
  const examples = raw['examples'];
  if (Array.isArray(examples)) {
    const registered = options.registeredTools === undefined ? undefined : new Set(options.registeredTools);
    examples.forEach((example: unknown, index) => {
      if (example === null || typeof example !== 'object') return;
      const tool = (example as Record<string, unknown>)['tool'];
      if (typeof tool !== 'string' || tool.trim() === '') return;
      const bare = exampleToolName(pluginName, tool);
      if (bare === undefined) {
        errors.push(
          `${prefix} field 'examples.${index}.tool': '${tool}' contains the separator "${NAME_SEPARATOR}"; ` +
            `name one of this plugin's own tools by its bare name.`,
        );
        return;
      }
      if (bare !== tool) {
        warnings.push(`${prefix} field 'examples.${index}.tool': qualified name '${tool}' is read as '${bare}'; prefer the bare name.`);
        normalisedTools.set(index, bare);
      }
      if (registered !== undefined && !registered.has(bare)) {
        errors.push(`${prefix} example references unknown tool '${bare}'.`);
      } else if (registered === undefined && !isValidToolName(bare)) {
        errors.push(`${prefix} field 'examples.${index}.tool': '${bare}' is not a valid tool name.`);
      }
    });
  }

  const summary = raw['summary'];
  if (typeof summary === 'string' && summary.length > MANIFEST_SOFT_LIMITS.summaryChars) {
    warnings.push(
      `${prefix} summary is ${summary.length} characters; keep it to ${MANIFEST_SOFT_LIMITS.summaryChars} or fewer (it costs tokens on every turn).`,
    );
  }
  if (Array.isArray(whenToUse)) {
    if (whenToUse.length > MANIFEST_SOFT_LIMITS.whenToUseEntries) {
      warnings.push(
        `${prefix} has ${whenToUse.length} whenToUse entries; more than ${MANIFEST_SOFT_LIMITS.whenToUseEntries} dilute one another.`,
      );
    }
    whenToUse.forEach((entry: unknown, index) => {
      if (typeof entry !== 'string') return;
      if (entry.length > MANIFEST_SOFT_LIMITS.whenToUseEntryChars) {
        warnings.push(
          `${prefix} field 'whenToUse.${index}' is ${entry.length} characters; keep entries to ${MANIFEST_SOFT_LIMITS.whenToUseEntryChars} or fewer.`,
        );
      } else if (entry.trim() === '') {
        warnings.push(`${prefix} field 'whenToUse.${index}' is empty.`);
      }
    });
  }
  const tags = raw['tags'];
  if (Array.isArray(tags)) {
    tags.forEach((tag: unknown, index) => {
      if (typeof tag !== 'string') return;
      if (tag !== tag.toLowerCase()) warnings.push(`${prefix} tag '${tag}' contains uppercase letters; tags should be lowercase.`);
      else if (tag.trim() === '') warnings.push(`${prefix} field 'tags.${index}' is empty.`);
    });
  }

  if (errors.length > 0 || !parsed.success) return { valid: false, errors, warnings };
  const result = parsed.data;
  if (normalisedTools.size > 0 && result.examples !== undefined) {
    result.examples = result.examples.map((example, index) => {
      const bare = normalisedTools.get(index);
      return bare === undefined ? example : { ...example, tool: bare };
    });
  }
  return { valid: true, errors, warnings, manifest: result };
}
