/**
 * @module plugins/service/secret-values
 * Credential values at the service boundary: keys and values parsed (never quoted back in an
 * error), sealed with the secret box under a context naming the plugin and key, and opened again
 * for the runtime. Both install and the `secret set` command store secrets through here.
 */
import { z } from 'zod';
import { invalidInput } from '../../core/errors.ts';
import { ENV_NAME_PATTERN } from '../../core/plugin-metadata.ts';
import type { Queryable } from '../../store/database.ts';
import { listSecrets, upsertSecret } from '../../store/repositories/secrets.ts';
import type { PluginContext } from './context.ts';

const secretValueSchema = z.string().min(1, 'a secret value must not be empty').max(65_536, 'a secret value is at most 64 KiB');
const secretKeySchema = z.string().regex(ENV_NAME_PATTERN, 'secret keys are environment-variable names: a letter or "_" then letters, digits, "_"').max(128);

/** The AAD a secret is sealed under: a sealed value moved to another plugin or key does not open. */
function secretContext(pluginId: string, key: string): string {
  return `quiver/plugin-secret/${pluginId}/${key}`;
}

/** A secret value, parsed; the error never includes the value itself. */
export function parseSecretValue(value: string): string {
  const parsed = secretValueSchema.safeParse(value);
  if (!parsed.success) throw invalidInput(parsed.error.issues[0]?.message ?? 'invalid secret value');
  return parsed.data;
}

/** A secret key, parsed: an environment-variable name. */
export function parseSecretKey(key: string): string {
  const parsed = secretKeySchema.safeParse(key);
  if (!parsed.success) throw invalidInput(`invalid secret key '${key}': ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/** Seals and stores secret values of a plugin (inside the caller's transaction when given one). */
export async function storeSecrets(context: PluginContext, queryable: Queryable, pluginId: string, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) {
    await upsertSecret(queryable, pluginId, key, context.secrets.seal(value, secretContext(pluginId, key)), context.now());
  }
}

/** A plugin's secret values, opened. */
export async function secretValues(context: PluginContext, pluginId: string): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const row of await listSecrets(context.db, pluginId)) values[row.key] = context.secrets.open(row, secretContext(pluginId, row.key));
  return values;
}
