/**
 * @module plugins/plugin-env
 * Non-secret settings of a plugin (issue #15): `quiver plugin env set NAME KEY VALUE` stores a
 * plain environment variable, shown by `plugin show` and passed to the plugin like a
 * credential. The rules, checked here so the service, the API and the CLI agree:
 * - a key is a setting or a secret, never both: setting a key that is stored as a secret (or
 *   the reverse) is a `conflict` naming the command that removes the other;
 * - a credential the plugin declares as required, or as an HTTP header, is a secret by its
 *   author's word: `env set` refuses it (an optional declared variable such as server-memory's
 *   `MEMORY_FILE_PATH` may be a setting);
 * - `LD_*` and `QUIVER_*` are refused: the environment reaches the launch chain (setpriv,
 *   unshare, bwrap) before the sandbox exists, and `QUIVER_SUPERVISOR_ID` marks plugin processes;
 * - should both exist anyway (older data), the secret wins in the launch environment.
 */
import { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput } from '../core/errors.ts';
import { ENV_NAME_PATTERN, type CredentialSpec } from '../core/plugin-metadata.ts';
import { isLoaderVariable } from '../runtime/sandbox.ts';

/** Key of a setting: an environment-variable name. */
export const envKeySchema = z
  .string()
  .max(128, 'a setting key is at most 128 characters')
  .regex(ENV_NAME_PATTERN, 'setting keys are environment-variable names: a letter or "_" then letters, digits, "_"');

/** Value of a setting: plain text up to 64 KiB (empty allowed: some variables mean "off" when empty). */
export const envValueSchema = z.string().max(65_536, 'a setting value is at most 64 KiB');

const reservedPrefixes = ['LD_', 'QUIVER_'];

/** Throws `invalid_input` or `conflict` when `key` may not be a plain setting of this plugin. */
export function assertSettingAllowed(
  plugin: string,
  key: string,
  value: string,
  context: { credentials: readonly CredentialSpec[]; secretKeys: ReadonlySet<string> },
): void {
  const parsedKey = envKeySchema.safeParse(key);
  if (!parsedKey.success) throw invalidInput(`invalid setting key '${key.slice(0, 60)}': ${parsedKey.error.issues[0]?.message ?? ''}`);
  const parsedValue = envValueSchema.safeParse(value);
  if (!parsedValue.success) throw invalidInput(`invalid value for '${key}': ${parsedValue.error.issues[0]?.message ?? ''}`);
  const reserved = isLoaderVariable(key) ? 'LD_' : reservedPrefixes.find((prefix) => key.toUpperCase().startsWith(prefix));
  if (reserved !== undefined) {
    throw invalidInput(`'${key}' cannot be a plugin setting: ${reserved}* variables act on Quiver's launch of the plugin, outside its sandbox`);
  }
  const declared = context.credentials.find((credential) => credential.name === key);
  if (declared !== undefined && (declared.required || declared.as === 'header')) {
    throw invalidInput(
      `'${key}' is a credential plugin '${plugin}' declares as ${declared.as === 'header' ? 'an HTTP header' : 'required'}: ` +
        `store it encrypted with 'quiver plugin secret set ${plugin} ${key}'`,
      { key, reason: 'declared_credential' },
    );
  }
  if (context.secretKeys.has(key)) {
    throw new QuiverError(
      ErrorCodes.conflict,
      `'${key}' is stored as a secret of plugin '${plugin}'; a key is a secret or a setting, not both: delete the secret first (DELETE /api/v1/plugins/${plugin}/secrets/${key})`,
      { details: { key, reason: 'stored_as_secret' } },
    );
  }
}

/** Throws `conflict` when a secret named `key` would shadow a plain setting of the plugin, `invalid_input` for a loader variable. */
export function assertSecretAllowed(plugin: string, key: string, settingKeys: ReadonlySet<string>): void {
  if (isLoaderVariable(key) || key.toUpperCase().startsWith('QUIVER_')) {
    throw invalidInput(`'${key}' cannot be a secret of plugin '${plugin}': it would act on Quiver's launch of the plugin, outside its sandbox`);
  }
  if (!settingKeys.has(key)) return;
  throw new QuiverError(
    ErrorCodes.conflict,
    `'${key}' is a plain setting of plugin '${plugin}'; a key is a secret or a setting, not both: remove it first with 'quiver plugin env unset ${plugin} ${key}'`,
    { details: { key, reason: 'stored_as_setting' } },
  );
}

/** The launch environment: settings, then credential variables over them (a secret wins a clash). */
export function mergeLaunchEnv(settings: Readonly<Record<string, string>>, credentials: Readonly<Record<string, string>>): Record<string, string> {
  return { ...settings, ...credentials };
}
