/**
 * @module core/plugin-metadata
 * `quiver.json`: the file a plugin ships beside its code (DESIGN §3.1, §3.5) — its manifest
 * (seed 002), its Plugin Intelligence Document (seed 000 §3.2), how to launch it, the
 * credentials it needs, and the categories and page mappings it contributes to the catalog
 * (seed 001 §9). Plus the pure merge that turns manifest + PID + the tools MCP discovery
 * found into catalog tool inputs (`toolInputSchema`).
 *
 * Launch never assumes Node: `command` is any executable (`python`, `uvx`, `docker`,
 * `./server`), or there is no command at all and the plugin is a remote HTTP endpoint.
 */
import { z } from 'zod';
import { canonicalJson } from './hash.ts';
import { exampleToolName, pluginManifestSchema, validateManifest, type ManifestExample, type PluginManifest } from './manifest.ts';
import { toolNameSchema, pluginNameSchema } from './name-schemas.ts';
import {
  pluginIntelligenceDocumentSchema,
  validatePid,
  type PluginIntelligenceDocument,
  type ToolDefinition,
  type UseCaseDefinition,
} from './pid.ts';
import { toolInputSchema, type ToolInput, type ToolInputDraft } from './tool.ts';
import { formatIssues } from './validation.ts';

/** Names of environment variables and credentials: a letter or `_`, then letters, digits, `_`. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** HTTP header names (RFC 9110 token). */
const HEADER_NAME_PATTERN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

const envNameSchema = z.string().max(128).regex(ENV_NAME_PATTERN, 'must be a letter or "_" followed by letters, digits or "_"');

/** A folder inside the plugin: relative, never climbing out with `..`. */
const relativePathSchema = z
  .string()
  .min(1)
  .max(1_000)
  .refine((path) => !/^([\\/]|[A-Za-z]:)/.test(path), 'must be relative to the plugin folder')
  .refine((path) => !path.split(/[\\/]/).includes('..'), 'must not leave the plugin folder ("..")');

/** Transports a plugin can speak: a child process over stdio, or Streamable HTTP at `url`. */
export const LAUNCH_TRANSPORTS = ['stdio', 'http'] as const;

/**
 * How to run the plugin. stdio needs `command`; http needs `url` and may also have a
 * `command` that starts the local server first. Unknown keys are errors: a misspelt launch
 * option must not silently start the process some other way.
 */
export const launchSpecSchema = z
  .strictObject({
    command: z.string().min(1).max(4_096).optional(),
    args: z.array(z.string().max(32_768)).max(256).optional(),
    /** Names of environment variables the process receives; each should be a declared credential. */
    env: z.array(envNameSchema).max(100).optional(),
    /** Working folder, relative to the plugin folder. */
    cwd: relativePathSchema.optional(),
    transport: z.enum(LAUNCH_TRANSPORTS).default('stdio'),
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_048).optional(),
  })
  .superRefine((launch, context) => {
    if (launch.transport === 'stdio' && launch.command === undefined) {
      context.addIssue({ code: 'custom', path: ['command'], message: "is required when transport is 'stdio'" });
    }
    if (launch.transport === 'http' && launch.url === undefined) {
      context.addIssue({ code: 'custom', path: ['url'], message: "is required when transport is 'http'" });
    }
  });

/** A secret the plugin needs, handed over at start as an env variable or an HTTP header (DESIGN §3.5). */
export const credentialSpecSchema = z
  .strictObject({
    name: envNameSchema,
    description: z.string().max(2_000).optional(),
    required: z.boolean().default(true),
    as: z.enum(['env', 'header']).default('env'),
    header: z.string().max(128).regex(HEADER_NAME_PATTERN, 'must be an HTTP header name').optional(),
  })
  .superRefine((credential, context) => {
    if (credential.as === 'header' && credential.header === undefined) {
      context.addIssue({ code: 'custom', path: ['header'], message: "is required when as is 'header'" });
    }
    if (credential.as === 'env' && credential.header !== undefined) {
      context.addIssue({ code: 'custom', path: ['header'], message: "is only used when as is 'header'" });
    }
  });

/** A catalog category the plugin contributes (seed 001 table 1); `tools` assigns its tools to it. */
export const pluginCategorySchema = z.strictObject({
  name: z.string().min(1).max(200),
  displayName: z.string().max(200).optional(),
  description: z.string().max(2_000).optional(),
  /** Parent category name: one declared here or a global one. */
  parent: z.string().min(1).max(200).optional(),
  tools: z.array(toolNameSchema).max(1_000).optional(),
});

/** A page pattern → category mapping (seed 001 table 3: exact, `prefix*`, `*suffix`, `*contains*`). */
export const pageMappingSchema = z.strictObject({
  pagePattern: z.string().min(1).max(500),
  category: z.string().min(1).max(200),
  priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
});

/** The whole `quiver.json`. Unknown top-level keys are dropped with a warning (forward compatibility). */
export const pluginMetadataSchema = z.object({
  $schema: z.string().max(2_048).optional(),
  name: pluginNameSchema.optional(),
  version: z.string().min(1).max(100).optional(),
  description: z.string().max(20_000).optional(),
  manifest: pluginManifestSchema.optional(),
  intelligence: pluginIntelligenceDocumentSchema.optional(),
  launch: launchSpecSchema.optional(),
  credentials: z.array(credentialSpecSchema).max(100).optional(),
  categories: z.array(pluginCategorySchema).max(200).optional(),
  pageMappings: z.array(pageMappingSchema).max(1_000).optional(),
});

export type LaunchSpec = z.output<typeof launchSpecSchema>;
export type CredentialSpec = z.output<typeof credentialSpecSchema>;
export type PluginCategory = z.output<typeof pluginCategorySchema>;
export type PageMapping = z.output<typeof pageMappingSchema>;
/** A validated `quiver.json`. */
export type PluginMetadata = z.output<typeof pluginMetadataSchema>;

/** Options of `validatePluginMetadata`. */
export interface ValidatePluginMetadataOptions {
  /** The name the hub installs the plugin under; defaults to the file's `name`. */
  pluginName?: string;
  /** Tool names the plugin really registers, when discovery has run. */
  registeredTools?: readonly string[];
}

/** `{valid, errors, warnings}` for the whole file, with the parsed metadata when valid. */
export interface PluginMetadataValidationResult {
  valid: boolean;
  errors: string[];
  warnings: string[];
  metadata?: PluginMetadata;
}

// The shell checks everything but the two documents, which their own validators check so
// their cross-field rules (seed 002, seed 000) and messages apply.
const shellSchema = pluginMetadataSchema.extend({ manifest: z.unknown().optional(), intelligence: z.unknown().optional() });
const KNOWN_FIELDS = new Set(Object.keys(pluginMetadataSchema.shape));

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const asRecords = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value) ? value.map(asRecord).filter((item): item is Record<string, unknown> => item !== undefined) : [];

/** Validates a parsed `quiver.json`, its manifest and its PID, collecting every error and warning. */
export function validatePluginMetadata(
  input: unknown,
  options: ValidatePluginMetadataOptions = {},
): PluginMetadataValidationResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const raw = asRecord(input);
  if (raw === undefined) return { valid: false, errors: ['quiver.json must be a JSON object.'], warnings };

  const shell = shellSchema.safeParse(raw);
  if (!shell.success) {
    for (const issue of formatIssues(shell.error)) errors.push(`quiver.json field '${issue.path}': ${issue.message}.`);
  }
  for (const key of Object.keys(raw).sort()) {
    if (!KNOWN_FIELDS.has(key)) warnings.push(`quiver.json has unknown field '${key}'; it is ignored.`);
  }

  const fileName = typeof raw['name'] === 'string' ? raw['name'] : undefined;
  const pluginName = options.pluginName ?? fileName ?? '(unnamed)';
  if (options.pluginName !== undefined && fileName !== undefined && fileName !== options.pluginName) {
    warnings.push(`quiver.json name '${fileName}' differs from the installed plugin name '${options.pluginName}'; the installed name is used.`);
  }

  let manifest: PluginManifest | undefined;
  if (raw['manifest'] !== undefined) {
    const result = validateManifest(raw['manifest'], {
      pluginName,
      ...(options.registeredTools === undefined ? {} : { registeredTools: options.registeredTools }),
    });
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    manifest = result.manifest;
  }
  let intelligence: PluginIntelligenceDocument | undefined;
  if (raw['intelligence'] !== undefined) {
    const result = validatePid(raw['intelligence'], {
      pluginName,
      ...(options.registeredTools === undefined ? {} : { registeredTools: options.registeredTools }),
    });
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    intelligence = result.pid;
  }

  checkCrossReferences(raw, options.registeredTools, errors, warnings);

  if (errors.length > 0 || !shell.success) return { valid: false, errors, warnings };
  const { manifest: _manifest, intelligence: _intelligence, ...rest } = shell.data;
  const metadata: PluginMetadata = { ...rest };
  if (manifest !== undefined) metadata.manifest = manifest;
  if (intelligence !== undefined) metadata.intelligence = intelligence;
  return { valid: true, errors, warnings, metadata };
}

/** Rules that join sections: duplicate names, env ↔ credentials, categories ↔ tools and mappings. */
function checkCrossReferences(
  raw: Record<string, unknown>,
  registeredTools: readonly string[] | undefined,
  errors: string[],
  warnings: string[],
): void {
  const credentials = asRecords(raw['credentials']);
  const credentialAt = new Map<string, number>();
  credentials.forEach((credential, index) => {
    const name = credential['name'];
    if (typeof name !== 'string') return;
    const first = credentialAt.get(name);
    if (first === undefined) credentialAt.set(name, index);
    else errors.push(`quiver.json field 'credentials.${index}.name': duplicate credential '${name}' (first declared at credentials.${first}).`);
  });
  const envCredentials = new Set(
    credentials.filter((c) => c['as'] === undefined || c['as'] === 'env').map((c) => c['name']),
  );

  const launch = asRecord(raw['launch']);
  if (launch !== undefined) {
    const transport = launch['transport'] ?? 'stdio';
    const env = Array.isArray(launch['env']) ? launch['env'] : [];
    env.forEach((name: unknown, index) => {
      if (typeof name === 'string' && !envCredentials.has(name)) {
        warnings.push(
          `quiver.json field 'launch.env.${index}': '${name}' is not a declared credential; declare it under credentials so the hub can ask for it.`,
        );
      }
    });
    if (transport === 'stdio' && launch['url'] !== undefined) {
      warnings.push(`quiver.json field 'launch.url' is only used with transport 'http'; it is ignored.`);
    }
    if (transport === 'stdio' && credentials.some((c) => c['as'] === 'header')) {
      warnings.push(`quiver.json declares header credentials but launch.transport is 'stdio'; headers are only sent over http.`);
    }
  }

  const categories = asRecords(raw['categories']);
  const categoryAt = new Map<string, number>();
  const toolCategory = new Map<string, string>();
  const registered = registeredTools === undefined ? undefined : new Set(registeredTools);
  categories.forEach((category, index) => {
    const name = category['name'];
    if (typeof name !== 'string') return;
    const first = categoryAt.get(name);
    if (first === undefined) categoryAt.set(name, index);
    else errors.push(`quiver.json field 'categories.${index}.name': duplicate category '${name}' (first declared at categories.${first}).`);
  });
  categories.forEach((category, index) => {
    const name = category['name'];
    const parent = category['parent'];
    if (typeof parent === 'string' && !categoryAt.has(parent)) {
      warnings.push(`quiver.json field 'categories.${index}.parent': '${parent}' is not declared here; it must exist as a global category.`);
    }
    const tools = Array.isArray(category['tools']) ? category['tools'] : [];
    for (const tool of tools) {
      if (typeof tool !== 'string' || typeof name !== 'string') continue;
      const already = toolCategory.get(tool);
      if (already !== undefined && already !== name) {
        warnings.push(`quiver.json puts tool '${tool}' in categories '${already}' and '${name}'; the first is used.`);
      } else if (already === undefined) {
        toolCategory.set(tool, name);
      }
      if (registered !== undefined && !registered.has(tool)) {
        warnings.push(`quiver.json category '${name}' lists tool '${tool}', which the plugin does not register.`);
      }
    }
  });
  asRecords(raw['pageMappings']).forEach((mapping, index) => {
    const category = mapping['category'];
    if (typeof category === 'string' && !categoryAt.has(category)) {
      warnings.push(`quiver.json field 'pageMappings.${index}.category': '${category}' is not declared here; it must exist as a global category.`);
    }
  });
}

/** A tool as MCP discovery (`tools/list`) reports it. */
export interface DiscoveredTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** Passed through to clients as declared (issue #12); kept in `metadata.mcpFields`. */
  icons?: unknown[];
  execution?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** The MCP tool fields the catalog has no column for: stored as discovered under `metadata.mcpFields`. */
export function mcpFieldsOf(tool: DiscoveredTool): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  if (tool.icons !== undefined) fields['icons'] = tool.icons;
  if (tool.execution !== undefined) fields['execution'] = tool.execution;
  if (tool._meta !== undefined) fields['_meta'] = tool._meta;
  return Object.keys(fields).length > 0 ? fields : undefined;
}

/** Inputs of `buildCatalogTools`: what the plugin declares and what discovery found. */
export interface BuildCatalogToolsOptions {
  pluginName: string;
  /** The tools the server really registers; only these become catalog entries. */
  discovered: readonly DiscoveredTool[];
  manifest?: PluginManifest;
  intelligence?: PluginIntelligenceDocument;
  /** Declared categories; a tool listed in one takes its name as its category. */
  categories?: readonly PluginCategory[];
  /** The plugin's own description (quiver.json `description`): the last summary fallback. */
  description?: string;
}

/** The catalog inputs plus what was dropped or trimmed on the way. */
export interface CatalogToolsResult {
  tools: ToolInput[];
  warnings: string[];
}

// Mirror of `toolInputSchema`'s bounds, so merged lists are trimmed rather than rejected.
const LIMITS = { entries: 100, entryChars: 2_000, exampleQueries: 500, tags: 100, tagChars: 100, summaryChars: 1_000 } as const;
// PID tool fields that map onto catalog columns; every other field goes to `metadata`.
const MAPPED_DEFINITION_FIELDS = new Set(['name', 'description', 'inputSchema', 'outputSchema', 'semanticTags']);

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** Trimmed, non-empty, case-insensitively unique entries, first occurrence kept. */
function uniqueTexts(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const text of texts) {
    const trimmed = text.trim();
    const key = trimmed.toLowerCase();
    if (trimmed === '' || seen.has(key)) continue;
    seen.add(key);
    result.push(trimmed);
  }
  return result;
}

/** One whenToUse entry from a PID use case: `scenario: trigger (e.g. "example")`. */
function renderUseCase(useCase: UseCaseDefinition): string {
  let text = useCase.scenario.trim();
  if (useCase.trigger !== undefined && useCase.trigger.trim() !== '') text += `: ${useCase.trigger.trim()}`;
  if (useCase.example !== undefined && useCase.example.trim() !== '') text += ` (e.g. "${useCase.example.trim()}")`;
  return text;
}

/** Bounds a plugin-level list once, saying so when entries are dropped. */
function boundList(texts: readonly string[], maxEntries: number, what: string, prefix: string, warnings: string[]): string[] {
  const unique = uniqueTexts(texts).map((text) => clip(text, LIMITS.entryChars));
  if (unique.length > maxEntries) {
    warnings.push(`${prefix} has ${unique.length} ${what} entries; the catalog keeps the first ${maxEntries}.`);
    return unique.slice(0, maxEntries);
  }
  return unique;
}

/**
 * Turns manifest + PID + discovered tools into catalog tool inputs (`toolInputSchema`),
 * pure and deterministic (same inputs, same output, in discovery order).
 *
 * Retrieval text is layered: tool-level text (description, PID semantic tags, the manifest
 * examples' user messages as `exampleQueries`) is specific to one tool; plugin-level text
 * (manifest whenToUse / whenNotToUse / tags, PID use cases, capabilities, anti-patterns,
 * related concepts, the summary) goes on every tool of the plugin so a query about the
 * plugin's domain reaches all of them. Plugin-level use-case examples are deliberately not
 * `exampleQueries`: Tool2Vec averages those into the tool's vector, and shared queries would
 * make every tool of the plugin embed alike (DESIGN §3.3).
 */
export function buildCatalogTools(options: BuildCatalogToolsOptions): CatalogToolsResult {
  const { pluginName, manifest, intelligence } = options;
  const prefix = `Plugin '${pluginName}'`;
  const warnings: string[] = [];
  const discoveredNames = new Set(options.discovered.map((tool) => tool.name));

  const definitions = new Map<string, ToolDefinition>();
  for (const definition of intelligence?.tools ?? []) {
    if (definitions.has(definition.name)) continue;
    definitions.set(definition.name, definition);
    if (!discoveredNames.has(definition.name)) {
      warnings.push(`${prefix} PID describes tool '${definition.name}', which discovery did not find; the definition is ignored.`);
    }
  }

  const examplesByTool = new Map<string, ManifestExample[]>();
  for (const example of manifest?.examples ?? []) {
    const bare = exampleToolName(pluginName, example.tool);
    if (bare === undefined || !discoveredNames.has(bare)) {
      warnings.push(`${prefix} manifest example references unknown tool '${example.tool}'; the example is ignored.`);
      continue;
    }
    examplesByTool.set(bare, [...(examplesByTool.get(bare) ?? []), example]);
  }

  const categoryByTool = new Map<string, string>();
  for (const category of options.categories ?? []) {
    for (const tool of category.tools ?? []) if (!categoryByTool.has(tool)) categoryByTool.set(tool, category.name);
  }

  const semantic = intelligence?.semantic;
  const whenToUse = boundList(
    [...(manifest?.whenToUse ?? []), ...(semantic?.useCases ?? []).map(renderUseCase), ...(semantic?.capabilities ?? [])],
    LIMITS.entries,
    'whenToUse (manifest whenToUse, PID useCases and capabilities)',
    prefix,
    warnings,
  );
  const whenNotToUse = boundList(
    [...(manifest?.whenNotToUse ?? []), ...(semantic?.antiPatterns ?? [])],
    LIMITS.entries,
    'whenNotToUse (manifest whenNotToUse, PID antiPatterns)',
    prefix,
    warnings,
  );
  const pluginTags = [...(manifest?.tags ?? []), ...(semantic?.relatedConcepts ?? [])];
  const summarySource = [manifest?.summary, options.description].find((text) => text !== undefined && text.trim() !== '');
  const summary = summarySource === undefined ? undefined : clip(summarySource.trim(), LIMITS.summaryChars);

  const tools: ToolInput[] = [];
  const seen = new Set<string>();
  for (const discovered of options.discovered) {
    if (seen.has(discovered.name)) {
      warnings.push(`${prefix} discovery reported tool '${discovered.name}' twice; the first is used.`);
      continue;
    }
    seen.add(discovered.name);
    const definition = definitions.get(discovered.name);

    // Discovery is the truth about what the server serves; the PID fills what it lacks.
    const description = [discovered.description, definition?.description].find((text) => text !== undefined && text.trim() !== '') ?? '';
    if (description === '') warnings.push(`${prefix} tool '${discovered.name}' has no description.`);
    if (definition?.inputSchema !== undefined && canonicalJson(definition.inputSchema) !== canonicalJson(discovered.inputSchema)) {
      warnings.push(`${prefix} PID inputSchema of tool '${discovered.name}' differs from the discovered one; the discovered schema is used.`);
    }

    const tags: string[] = [];
    for (const tag of uniqueTexts([...(definition?.semanticTags ?? []), ...pluginTags].map((t) => t.toLowerCase().replace(/\s+/g, ' ')))) {
      if (tag.length > LIMITS.tagChars) continue; // a long related concept is a sentence, not a label
      if (tags.length < LIMITS.tags) tags.push(tag);
    }

    const examples = examplesByTool.get(discovered.name) ?? [];
    const metadata: Record<string, unknown> = {};
    if (definition !== undefined) {
      for (const [key, value] of Object.entries(definition)) if (!MAPPED_DEFINITION_FIELDS.has(key)) metadata[key] = value;
    }
    if (examples.length > 0) {
      metadata['fewShotExamples'] = examples.map(({ user, thought, args }) => ({
        user,
        ...(thought === undefined ? {} : { thought }),
        ...(args === undefined ? {} : { args }),
      }));
    }
    if (manifest !== undefined) {
      metadata['pluginTitle'] = manifest.title;
      if (manifest.stability !== undefined) metadata['stability'] = manifest.stability;
    }
    // Set last: what the server serves wins over a PID field of the same name.
    const mcpFields = mcpFieldsOf(discovered);
    if (mcpFields !== undefined) metadata['mcpFields'] = mcpFields;
    else delete metadata['mcpFields'];

    const draft: ToolInputDraft = {
      name: discovered.name,
      description,
      parameters: discovered.inputSchema,
      annotations: discovered.annotations ?? {},
      tags,
      whenToUse,
      whenNotToUse,
      exampleQueries: uniqueTexts(examples.map((example) => example.user)).slice(0, LIMITS.exampleQueries),
      metadata,
    };
    // Only the tool's own `title` is its title: `annotations.title` stays a hint inside the
    // annotations, passed through as served, never copied up (issue #24, protocol fidelity).
    const displayName = discovered.title;
    if (displayName !== undefined && displayName.trim() !== '') draft.displayName = clip(displayName.trim(), 200);
    const returnSchema = discovered.outputSchema ?? definition?.outputSchema;
    if (returnSchema !== undefined) draft.returnSchema = returnSchema;
    if (summary !== undefined) draft.summary = summary;
    const category = categoryByTool.get(discovered.name) ?? manifest?.category;
    if (category !== undefined) draft.category = category;

    const parsed = toolInputSchema.safeParse(draft);
    if (!parsed.success) {
      const reasons = formatIssues(parsed.error).map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      warnings.push(`${prefix} tool '${discovered.name}' cannot be catalogued (${reasons}); it is skipped.`);
      continue;
    }
    tools.push(parsed.data);
  }
  return { tools, warnings };
}
