/**
 * @module plugins/service/launch-env
 * What a plugin starts with: its secrets (sealed at rest), its non-secret settings
 * (`plugin env set`, rules in plugin-env.ts), the environment and headers they resolve to, and
 * the runtime spec built from them. Writes report `secrets` or `settings`: the gateway drops
 * its cached spec and the supervisor restarts the plugin with the new environment.
 */
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { parseUpstreamSpec, type TrustLevel } from '../../runtime/types.ts';
import { deletePluginEnv, listPluginEnv, upsertPluginEnv } from '../../store/repositories/plugin-env.ts';
import { deleteSecret, listSecrets } from '../../store/repositories/secrets.ts';
import { listEgressRules } from '../../store/repositories/trust.ts';
import { findIntelligence, type PluginRecord } from '../../store/repositories/plugins.ts';
import { executionFromPid } from '../../runtime/execution-profile.ts';
import { buildUpstreamSpec, credentialDelivery } from '../installer.ts';
import type { StoredLaunch } from '../launch.ts';
import { assertSecretAllowed, assertSettingAllowed, mergeLaunchEnv } from '../plugin-env.ts';
import type { PluginContext } from './context.ts';
import { mountsOf } from './mounts.ts';
import { parseCredentials, requirePlugin } from './records.ts';
import { parseSecretKey, parseSecretValue, secretValues, storeSecrets } from './secret-values.ts';
import type { PluginService } from './types.ts';

/** The secret, setting and launch methods of the service. */
export type LaunchEnvPart = Pick<
  PluginService,
  'setSecret' | 'deleteSecret' | 'setEnv' | 'unsetEnv' | 'listEnv' | 'resolveLaunchEnv' | 'upstreamSpec'
>;

/** Decrypted env variables and headers of a plugin; `missing_credential` names required keys not set. */
async function launchEnvOf(context: PluginContext, record: PluginRecord): Promise<{ env: Record<string, string>; headers: Record<string, string> }> {
  const settings = Object.fromEntries((await listPluginEnv(context.db, record.id)).map((row) => [row.key, row.value]));
  const delivery = credentialDelivery(parseCredentials(record.credentials), await secretValues(context, record.id));
  if (delivery.missing.length > 0) {
    throw new QuiverError(
      'missing_credential',
      `plugin '${record.name}' cannot start: missing required credential${delivery.missing.length > 1 ? 's' : ''} ` +
        `${delivery.missing.map((m) => `'${m}'`).join(', ')}; set it with 'quiver plugin secret set ${record.name} ${delivery.missing[0]}'`,
      { kind: 'user', details: { plugin: record.name, missing: delivery.missing } },
    );
  }
  return { env: mergeLaunchEnv(settings, delivery.env), headers: delivery.headers };
}

/** Creates the secrets-and-settings part of the service. */
export function createLaunchEnvPart(context: PluginContext): LaunchEnvPart {
  const { db, logger } = context;
  return {
    async setSecret(reference, key, value) {
      const record = await requirePlugin(context, reference);
      parseSecretKey(key);
      const plaintext = parseSecretValue(value);
      assertSecretAllowed(record.name, key, new Set((await listPluginEnv(db, record.id)).map((row) => row.key)));
      await storeSecrets(context, db, record.id, { [key]: plaintext });
      context.changed({ kind: 'secrets', pluginId: record.id });
      logger.info({ plugin: record.name, key }, 'plugin secret set');
      return { key, declared: parseCredentials(record.credentials).some((credential) => credential.name === key) };
    },

    async deleteSecret(reference, key) {
      const record = await requirePlugin(context, reference);
      const deleted = await deleteSecret(db, record.id, key);
      if (deleted) context.changed({ kind: 'secrets', pluginId: record.id });
      return deleted;
    },

    async setEnv(reference, key, value) {
      const record = await requirePlugin(context, reference);
      const secretKeys = new Set((await listSecrets(db, record.id)).map((row) => row.key));
      assertSettingAllowed(record.name, key, value, { credentials: parseCredentials(record.credentials), secretKeys });
      const at = context.now();
      await upsertPluginEnv(db, record.id, key, value, at);
      context.changed({ kind: 'settings', pluginId: record.id });
      logger.info({ plugin: record.name, key }, 'plugin setting set');
      return { key, value, updatedAt: at };
    },

    async unsetEnv(reference, key) {
      const record = await requirePlugin(context, reference);
      const deleted = await deletePluginEnv(db, record.id, key);
      if (deleted) context.changed({ kind: 'settings', pluginId: record.id });
      return deleted;
    },

    async listEnv(reference) {
      return listPluginEnv(db, (await requirePlugin(context, reference)).id);
    },

    async resolveLaunchEnv(reference) {
      return launchEnvOf(context, await requirePlugin(context, reference));
    },

    async upstreamSpec(reference) {
      const record = await requirePlugin(context, reference);
      if (record.status !== 'active') throw new QuiverError(ErrorCodes.unavailable, `plugin '${record.name}' is ${record.status}`);
      if (record.launch === null) throw new QuiverError(ErrorCodes.unavailable, `plugin '${record.name}' has no launch (it registered itself through sync)`);
      const { env, headers } = await launchEnvOf(context, record);
      const root = typeof record.source['cachePath'] === 'string' ? record.source['cachePath'] : undefined;
      const spec = buildUpstreamSpec({
        pluginId: record.id,
        pluginName: record.name,
        version: record.version ?? 'local',
        launch: record.launch as unknown as StoredLaunch,
        root,
        env,
        headers,
        readOnlyPaths: context.installer.readOnlyPaths,
        trustLevel: (record.trustLevel as TrustLevel | null) ?? context.trustLevel,
        execution: executionFromPid((await findIntelligence(context.db, record.id))?.pid),
        mounts: await mountsOf(context, record.id),
      });
      // An OpenAPI plugin reaches internal addresses only where an admin allowed them (issue #23):
      // its egress rules, whatever its level (it runs no code of its own to sandbox).
      if (spec.transport === 'openapi') spec.allowInternal = (await listEgressRules(db, record.id)).map((rule) => ({ host: rule.host, port: rule.port }));
      // Effective trust (grants, caps, dynamic trust) and the enforced allow-list (issue #10).
      const trust = await context.launchTrust?.(record.id);
      if (trust === undefined) return parseUpstreamSpec(spec);
      return parseUpstreamSpec({ ...spec, trustLevel: trust.trustLevel, ...(spec.transport === 'stdio' && trust.egress !== undefined ? { egress: trust.egress } : {}) });
    },
  };
}
