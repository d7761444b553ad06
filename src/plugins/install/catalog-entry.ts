/**
 * @module plugins/install/catalog-entry
 * Steps 6 and 7 of an install: quiver.json is validated in full now that the registered tools
 * are known (seed 002: its examples are cross-checked against them), the catalog tool inputs
 * are built from what discovery found plus the metadata, and the plugin row's install fields
 * are assembled. Warnings are redacted of the install's credential values.
 */
import { buildCatalogTools, validatePluginMetadata, type CredentialSpec, type DiscoveredTool, type PluginMetadata } from '../../core/plugin-metadata.ts';
import { isQuiverError } from '../../core/errors.ts';
import { executionFromPid } from '../../runtime/execution-profile.ts';
import type { Redactor } from '../../runtime/redact.ts';
import type { PluginInstallFields } from '../../store/repositories/plugins.ts';
import type { StoredLaunch } from '../launch.ts';
import type { InstallRequest, PreparedInstall } from './types.ts';
import type { DiscoveredPlugin } from './discovery.ts';
import type { FailStep } from './failure.ts';
import type { FetchedSource } from './types.ts';
import type { PluginFiles } from './metadata.ts';
import { summarizeInstructions } from './instructions-summary.ts';

/** What the install commits, apart from the staged folder. */
export type CatalogEntry = Pick<PreparedInstall, 'fields' | 'tools' | 'categories' | 'pageMappings' | 'shippedPid' | 'registeredTools' | 'served' | 'clientRequirements' | 'warnings' | 'cachePath'>;

/** Everything the earlier steps produced. */
export interface CatalogEntryInput {
  request: InstallRequest;
  fetched: FetchedSource;
  files: PluginFiles;
  launch: StoredLaunch;
  version: string;
  credentials: readonly CredentialSpec[];
  discovered: DiscoveredPlugin;
  fail: FailStep;
  redact: Redactor;
}

/** Validates quiver.json against the registered tools; fails at `validation` with every error. */
function validatedMetadata(input: CatalogEntryInput): { metadata: PluginMetadata | undefined; warnings: string[] } {
  const { files, discovered, request, fail } = input;
  if (files.rawMetadata === undefined) return { metadata: undefined, warnings: [] };
  const result = validatePluginMetadata(files.rawMetadata, { pluginName: request.name, registeredTools: discovered.registeredTools });
  if (!result.valid) {
    throw fail('validation', `quiver.json has ${result.errors.length} error(s): ${result.errors.join(' ')}`, {
      errors: result.errors,
      warnings: result.warnings,
    });
  }
  try {
    executionFromPid(result.metadata?.intelligence); // issue #11: what the runtime cannot apply fails the install
  } catch (error) {
    if (!isQuiverError(error)) throw error;
    throw fail('validation', `quiver.json: ${error.message}`, { errors: [error.message], warnings: result.warnings });
  }
  return { metadata: result.metadata, warnings: result.warnings };
}

/** The discovery summary the plugin row keeps (what `show` reports). */
function discoveryRecord({ discovery, registeredTools }: DiscoveredPlugin): Record<string, unknown> {
  return {
    serverInfo: discovery.serverInfo ?? null,
    tools: registeredTools.length,
    resources: discovery.resources.map((resource) => ({
      uri: resource.uri,
      name: resource.name,
      ...(resource.description === undefined ? {} : { description: resource.description }),
      ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
    })),
    prompts: discovery.prompts.map((prompt) => ({
      name: prompt.name,
      ...(prompt.description === undefined ? {} : { description: prompt.description }),
      ...(prompt.arguments === undefined ? {} : { arguments: prompt.arguments }),
    })),
    sandbox: discovery.launch ?? null,
    durationMs: Math.round(discovery.durationMs),
  };
}

/** A source record without the previous discovery's `needsAuthorization` (each discovery decides it anew). */
function withoutWaiting(record: Record<string, unknown>): Record<string, unknown> {
  const { needsAuthorization: _previous, ...rest } = record;
  return rest;
}

/** Validates the metadata, builds the catalog tools and the install fields. */
export function buildCatalogEntry(input: CatalogEntryInput): CatalogEntry {
  const { request, fetched, files, launch, discovered } = input;
  const { discovery, registeredTools } = discovered;
  const name = request.name;
  const { metadata, warnings: metadataWarnings } = validatedMetadata(input);
  const warnings = [...fetched.warnings, ...metadataWarnings];
  const tools: DiscoveredTool[] = discovery.tools.map((tool) => ({
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as Record<string, unknown> }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as Record<string, unknown> }),
    ...(tool.icons === undefined ? {} : { icons: tool.icons }),
    ...(tool.execution === undefined ? {} : { execution: tool.execution as Record<string, unknown> }),
    ...(tool._meta === undefined ? {} : { _meta: tool._meta }),
  }));
  const description = metadata?.description ?? files.packageJson?.description ?? summarizeInstructions(discovery.instructions);
  const built = buildCatalogTools({
    pluginName: name,
    discovered: tools,
    ...(metadata?.manifest === undefined ? {} : { manifest: metadata.manifest }),
    ...(metadata?.intelligence === undefined ? {} : { intelligence: metadata.intelligence }),
    ...(metadata?.categories === undefined ? {} : { categories: metadata.categories }),
    ...(description === undefined ? {} : { description }),
  });
  warnings.push(...built.warnings);
  if (discovered.needsAuthorization !== undefined) warnings.push(`Plugin '${name}' needs an OAuth authorization (the server answered 401): ${discovered.needsAuthorization.hint}.`);
  else if (discovery.tools.length === 0) warnings.push(`Plugin '${name}' registers no tools.`);

  const cachePath = request.source.kind === 'url' && launch.transport === 'http' && fetched.root === undefined ? undefined : fetched.finalPath;
  const fields: PluginInstallFields = {
    name,
    displayName: metadata?.manifest?.title ?? discovery.serverInfo?.title ?? null,
    description: description ?? metadata?.manifest?.summary ?? '',
    version: input.version,
    sourceType: fetched.sourceType,
    source: { ...withoutWaiting(fetched.sourceRecord), ...(cachePath === undefined ? {} : { cachePath }), ...(fetched.inPlace ? { inPlace: true } : {}), ...(discovered.needsAuthorization ? { needsAuthorization: true } : {}) },
    launch: { ...launch } as Record<string, unknown>,
    manifest: (metadata?.manifest as Record<string, unknown> | undefined) ?? null,
    manifestWarnings: warnings.map(input.redact),
    visibility: metadata?.manifest?.visibility ?? 'on-demand',
    discovery: discoveryRecord(discovered),
    credentials: input.credentials.map((credential) => ({ ...credential })),
  };
  return {
    fields,
    tools: built.tools,
    categories: (metadata?.categories ?? []).map(({ tools: _tools, ...category }) => category),
    pageMappings: metadata?.pageMappings ?? [],
    shippedPid: metadata?.intelligence as Record<string, unknown> | undefined,
    registeredTools,
    served: tools,
    clientRequirements: discovery.clientRequirements,
    warnings: fields.manifestWarnings,
    cachePath,
  };
}
