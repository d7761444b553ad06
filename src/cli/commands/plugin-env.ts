/**
 * @module cli/commands/plugin-env
 * `quiver plugin env set|unset|list`: non-secret settings of a plugin (issue #15), stored in
 * plain, shown by `plugin show` and passed to the plugin as environment variables. Credentials
 * stay with `plugin secret set`; the rules are in src/plugins/plugin-env.ts.
 */
import { invalidInput, notFound } from '../../core/errors.ts';
import { formatTable, printJson, type CommandSpec } from '../command.ts';
import { pluginService } from './plugin.ts';

const envSet: CommandSpec = {
  path: ['plugin', 'env', 'set'],
  summary: 'Set a non-secret setting of a plugin, passed to it as an environment variable (credentials: plugin secret set).',
  usage: 'NAME KEY VALUE',
  async run(context) {
    const [name, key, value] = context.args.positionals;
    if (!name || !key || value === undefined) throw invalidInput('usage: quiver plugin env set NAME KEY VALUE (VALUE may be "")');
    const setting = await pluginService(await context.openApp()).setEnv(name, key, value);
    if (context.json) printJson(context.io, { plugin: name, ...setting });
    else context.io.stdout(`set ${key} for ${name}; the plugin restarts with it on its next call\n`);
    return 0;
  },
};

const envUnset: CommandSpec = {
  path: ['plugin', 'env', 'unset'],
  summary: 'Remove a non-secret setting of a plugin.',
  usage: 'NAME KEY',
  async run(context) {
    const [name, key] = context.args.positionals;
    if (!name || !key) throw invalidInput('usage: quiver plugin env unset NAME KEY');
    if (!(await pluginService(await context.openApp()).unsetEnv(name, key))) throw notFound(`setting of plugin '${name}'`, key);
    if (context.json) printJson(context.io, { plugin: name, removed: key });
    else context.io.stdout(`removed ${key} from ${name}\n`);
    return 0;
  },
};

const envList: CommandSpec = {
  path: ['plugin', 'env', 'list'],
  summary: 'List the non-secret settings of a plugin, values in plain.',
  usage: 'NAME',
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin env list NAME');
    const env = await pluginService(await context.openApp()).listEnv(name);
    if (context.json) printJson(context.io, { plugin: name, env });
    else if (env.length === 0) context.io.stdout(`No settings for ${name}: add one with 'quiver plugin env set ${name} KEY VALUE'.\n`);
    else context.io.stdout(formatTable(['KEY', 'VALUE', 'UPDATED'], env.map((row) => [row.key, row.value, row.updatedAt.toISOString()])));
    return 0;
  },
};

/** The `plugin env` commands. */
export const pluginEnvCommands: CommandSpec[] = [envSet, envUnset, envList];
