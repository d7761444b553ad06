/**
 * @module plugins/service/install
 * `add`: installs a plugin from a source string (git URL, `npm:<spec>`, folder, http(s) URL,
 * `market:<name>`). The request is resolved first (a marketplace entry becomes its npm or URL
 * source, headers and secrets are parsed into credential values), the name is claimed
 * (reservation.ts), the installer prepares the plugin in staging, and commit.ts commits it.
 * A removed plugin of the same name is re-installed over its row.
 */
import { QuiverError, ErrorCodes, invalidInput, notFound } from '../../core/errors.ts';
import { assertPluginName, slugifyPluginName } from '../../core/names.ts';
import type { CredentialSpec } from '../../core/plugin-metadata.ts';
import { posix } from 'node:path';
import { findMarketplaceServer } from '../../store/repositories/marketplace.ts';
import { deletePluginRecord, findPluginRecordByName } from '../../store/repositories/plugins.ts';
import { prepareInstall, type InstallRequest, type PreparedInstall } from '../installer.ts';
import { credentialNameForHeader, installPlanFor, marketplaceServerSchema } from '../marketplace.ts';
import { defaultNameHint, parsePluginSource, type PluginSource } from '../sources.ts';
import { commitExisting, commitReserved, reportOf, type SyncResult } from './commit.ts';
import type { PluginContext } from './context.ts';
import { requirePlugin, resolveScope, toPublic } from './records.ts';
import { checkMount, mountsNeedLocalPlugin, storeMounts, type CheckedMount } from './mounts.ts';
import { reserveInstall } from './reservation.ts';
import { parseSecretKey, parseSecretValue } from './secret-values.ts';
import type { AddPluginOptions, InstallReport } from './types.ts';

/** A source with its marketplace entry, headers and secrets resolved into what the installer takes. */
interface ResolvedSource {
  source: InstallRequest['source'];
  /** What the default name is derived from (a marketplace entry's registry name, e.g. io.github.user/weather → weather). */
  hint: string;
  extraCredentials: CredentialSpec[];
  values: Record<string, string>;
  args: string[];
  sourceExtras: Record<string, unknown>;
}

/** A monorepo sub-folder given with `--path`: relative, inside the repository, normalised. */
function repositorySubfolder(text: string): string | undefined {
  const trimmed = text.trim().replace(/\\/g, '/');
  if (trimmed === '' || /[\0\n\r]/.test(trimmed)) throw invalidInput('--path needs a folder inside the repository, e.g. packages/server');
  const normalised = posix.normalize(trimmed).replace(/\/+$/, '');
  if (posix.isAbsolute(normalised) || normalised === '..' || normalised.startsWith('../')) {
    throw invalidInput(`--path must be a folder inside the repository, got '${text}'`);
  }
  return normalised === '.' || normalised === '' ? undefined : normalised;
}

/** `--header` values as header credentials (stored encrypted), named after the header. */
function headerCredentials(headers: Record<string, string>): { credentials: CredentialSpec[]; values: Record<string, string> } {
  const credentials: CredentialSpec[] = [];
  const values: Record<string, string> = {};
  for (const [header, value] of Object.entries(headers)) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) throw invalidInput(`'${header}' is not a valid HTTP header name`);
    const name = credentialNameForHeader(header);
    credentials.push({ name, required: true, as: 'header', header });
    values[name] = parseSecretValue(value);
  }
  return { credentials, values };
}

/** Parses the source string and folds in the marketplace entry, headers and secrets. */
async function resolveSource(context: PluginContext, sourceText: string, addOptions: AddPluginOptions): Promise<ResolvedSource> {
  let source: PluginSource = parsePluginSource(sourceText);
  const hint = defaultNameHint(source);
  const extraCredentials: CredentialSpec[] = [];
  const values: Record<string, string> = {};
  let args = [...(addOptions.args ?? [])];
  const sourceExtras: Record<string, unknown> = {};

  if (source.kind === 'market') {
    const entry = await findMarketplaceServer(context.db, source.name);
    if (entry === undefined) throw notFound('marketplace server', source.name);
    const plan = installPlanFor(marketplaceServerSchema.parse(entry.server));
    extraCredentials.push(...plan.credentials);
    Object.assign(values, plan.defaults);
    sourceExtras['marketplace'] = entry.name;
    if (plan.kind === 'npm') {
      args = [...plan.args, ...args];
      source = { kind: 'npm', spec: plan.spec };
    } else source = { kind: 'url', url: plan.url };
  }
  if (addOptions.baseUrl !== undefined) {
    if (source.kind !== 'openapi') throw invalidInput('--base-url only applies to openapi: sources');
    source = { ...source, baseUrl: addOptions.baseUrl };
  }
  if (addOptions.headers !== undefined && Object.keys(addOptions.headers).length > 0) {
    const headers = headerCredentials(addOptions.headers);
    for (const credential of headers.credentials) {
      const at = extraCredentials.findIndex((known) => known.name === credential.name);
      if (at >= 0) extraCredentials.splice(at, 1);
      extraCredentials.push(credential);
    }
    Object.assign(values, headers.values);
  }
  for (const [key, value] of Object.entries(addOptions.secrets ?? {})) {
    parseSecretKey(key);
    values[key] = parseSecretValue(value);
  }
  return { source, hint, extraCredentials, values, args, sourceExtras };
}

/** Installs a plugin from a source string and enables it in the given scope. */
export async function addPlugin(context: PluginContext, sourceText: string, addOptions: AddPluginOptions = {}): Promise<InstallReport> {
  const { db, logger } = context;
  const { source, hint, extraCredentials, values, args, sourceExtras } = await resolveSource(context, sourceText, addOptions);
  const name = addOptions.name ?? slugifyPluginName(hint);
  assertPluginName(name);
  const scope = await resolveScope(context, { workspace: addOptions.workspace, project: addOptions.project });
  const existing = await findPluginRecordByName(db, name);
  if (existing !== undefined && existing.status !== 'removed' && existing.status !== 'failed') {
    throw new QuiverError(
      ErrorCodes.conflict,
      `a plugin named '${name}' is already installed (${existing.sourceType}); use 'quiver plugin update ${name}', or --name to install another copy`,
      { details: { name, pluginId: existing.id } },
    );
  }
  if (addOptions.ref !== undefined && source.kind !== 'git') throw invalidInput('--ref only applies to git sources');
  const subfolder = addOptions.path === undefined ? undefined : repositorySubfolder(addOptions.path);
  if (subfolder !== undefined && source.kind !== 'git') throw invalidInput('--path only applies to git sources (give a folder source its sub-folder directly)');
  // Host-path grants are checked before anything is fetched (issue #26): a refused one installs nothing.
  const mounts: CheckedMount[] = [];
  for (const grant of addOptions.mounts ?? []) {
    if (source.kind === 'url' || source.kind === 'openapi') throw mountsNeedLocalPlugin(source.kind);
    mounts.push(await checkMount(context, grant.path, grant.mode));
  }
  logger.info({ plugin: name, source: source.kind }, 'installing plugin');
  // A removed plugin is re-installed over its row; a new one (or a crashed install's leftover) gets a reserved row.
  const reinstalling = existing?.status === 'removed';
  const reservation = reinstalling ? undefined : await reserveInstall(context, name, source.kind, existing);
  const request: InstallRequest = {
    source,
    name,
    pluginId: reinstalling ? existing?.id : undefined,
    ref: addOptions.ref,
    subfolder,
    args,
    bin: addOptions.bin,
    trusted: addOptions.trusted ?? false,
    secretValues: values,
    extraCredentials,
    sourceExtras,
    mounts: mounts.map(({ path, mode }) => ({ path, mode })),
  };
  const scopeIds = { workspaceId: scope.workspace.id, projectId: scope.project?.id };
  let prepared: PreparedInstall;
  let sync: SyncResult;
  try {
    try {
      prepared = await prepareInstall(request, context.installer);
    } catch (error) {
      if (reservation !== undefined) await deletePluginRecord(db, reservation.id).catch((cleanup) => logger.error({ err: cleanup, plugin: name }, 'install cleanup failed'));
      throw error;
    }
    sync =
      reservation === undefined
        ? await commitExisting(context, existing!, prepared, { status: 'active', scope: scopeIds, values, firstDiscovery: true })
        : await commitReserved(context, reservation.id, prepared, scopeIds, values);
  } finally {
    reservation?.stop();
  }
  const pluginId = reservation?.id ?? existing!.id;
  if (mounts.length > 0) await storeMounts(context, pluginId, mounts, { actor: addOptions.mountActor ?? 'cli', reason: addOptions.mountReason });
  context.changed({ kind: 'installation', pluginId });
  const record = await requirePlugin(context, name);
  logger.info({ plugin: name, tools: prepared.tools.length, inserted: sync.inserted.length }, 'plugin installed');
  const report = reportOf(await toPublic(context, record), prepared, sync);
  return { ...report, warnings: [...report.warnings, ...mounts.flatMap((mount) => mount.warnings)], enabledIn: { workspace: scope.workspace.name, project: scope.project?.name ?? null } };
}
