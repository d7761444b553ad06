/**
 * @module cli/commands/plugin-mounts
 * Host folders as a declared permission (issue #26): `quiver plugin mount NAME DIR[:ro|:rw]`
 * grants a plugin a host path (read-only unless `:rw`), recorded with who and why;
 * `quiver plugin mount NAME` lists its grants; `quiver plugin unmount NAME DIR` withdraws one.
 * The hub's own home, data folder and key file (and any folder holding them) are refused. A
 * change applies when the plugin next starts — at its next call, or now with `--restart`.
 */
import { resolve } from 'node:path';
import { invalidInput } from '../../core/errors.ts';
import { cliActor, formatTable, printJson, stringOption, type CommandSpec } from '../command.ts';
import { pluginService } from './plugin.ts';

const restartOption = { restart: { type: 'boolean', default: false, description: "stop the plugin's running processes now, so its next call starts with the change" } } as const;

const mount: CommandSpec = {
  path: ['plugin', 'mount'],
  summary: 'Grant a plugin a host folder or file, read-only (DIR or DIR:ro) or read-write (DIR:rw); without DIR, list its grants.',
  usage: 'NAME [DIR[:ro|:rw]] [--reason WHY] [--restart]',
  options: { reason: { type: 'string', valueName: 'WHY', description: 'why (recorded with who)' }, ...restartOption },
  async run(context) {
    const [name, target] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin mount NAME [DIR[:ro|:rw]] [--reason WHY] [--restart]');
    const plugins = pluginService(await context.openApp());
    if (target === undefined) {
      const mounts = await plugins.listMounts(name);
      if (context.json) printJson(context.io, { plugin: name, mounts });
      else if (mounts.length === 0) context.io.stdout(`${name} has no host paths; grant one with 'quiver plugin mount ${name} DIR[:ro|:rw]'\n`);
      else context.io.stdout(formatTable(['PATH', 'MODE', 'WHO', 'WHY', 'GRANTED'], mounts.map((row) => [row.path, row.mode, row.actor, row.reason, row.createdAt.toISOString()])));
      return 0;
    }
    // Loaded when it runs (issue #28: the command list stays light).
    const { parseMountArgument } = await import('../../runtime/host-mounts.ts');
    const parsed = parseMountArgument(target);
    const grant = { path: resolve(context.cwd, parsed.path), mode: parsed.mode };
    const restart = context.args.values['restart'] === true;
    const result = await plugins.grantMount(name, { ...grant, actor: cliActor(), reason: stringOption(context, 'reason'), restart });
    if (context.json) printJson(context.io, { plugin: name, ...result });
    else {
      const what = `${result.mount.path} (${result.mount.mode === 'rw' ? 'read-write' : 'read-only'})`;
      const when = restart ? 'its processes were stopped: the next call starts with it' : 'the plugin starts with it at its next call (or now: --restart)';
      context.io.stdout(`${result.created ? `granted ${name} ${what}; ${when}` : `already granted: ${name} ${what}`}\n`);
      for (const warning of result.warnings) context.io.stdout(`warning: ${warning}\n`);
    }
    return 0;
  },
};

const unmount: CommandSpec = {
  path: ['plugin', 'unmount'],
  summary: 'Withdraw a host path granted to a plugin.',
  usage: 'NAME DIR [--restart]',
  options: restartOption,
  async run(context) {
    const [name, target] = context.args.positionals;
    if (!name || !target) throw invalidInput('usage: quiver plugin unmount NAME DIR [--restart]');
    const path = resolve(context.cwd, target);
    const restart = context.args.values['restart'] === true;
    const removed = await pluginService(await context.openApp()).revokeMount(name, path, { restart });
    if (context.json) printJson(context.io, { plugin: name, path, removed });
    else context.io.stdout(removed ? `withdrew ${path} from ${name}; ${restart ? 'its processes were stopped' : 'the plugin loses it at its next start (or now: --restart)'}\n` : `${path} was not granted to ${name}\n`);
    return 0;
  },
};

/** `quiver plugin mount|unmount`. */
export const pluginMountCommands: CommandSpec[] = [mount, unmount];
