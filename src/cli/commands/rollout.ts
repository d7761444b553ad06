/**
 * @module cli/commands/rollout
 * Upgrades without downtime (issue #11, docs/rollouts.md): `quiver plugin upgrade NAME [--ref R |
 * --version V]` stages the new version into the idle blue-green slot and starts a rollout
 * (10 % → 50 % → 100 % by default); `quiver plugin rollout status|promote|rollback|pause|resume
 * NAME` read and steer it. The steps are taken by a running `quiver serve` (its monitor judges
 * and moves rollouts); every command takes --json.
 */
import { invalidInput } from '../../core/errors.ts';
import type { RolloutView } from '../../rollouts/index.ts';
import { formatTable, printJson, stringOption, type CliContext, type CommandSpec } from '../command.ts';

function needName(context: CliContext, usage: string): string {
  const [name] = context.args.positionals;
  if (!name) throw invalidInput(`usage: quiver ${usage}`);
  return name;
}

const percentOf = (stats: { calls: number; failures: number }) => (stats.calls === 0 ? '-' : `${((stats.failures / stats.calls) * 100).toFixed(1)} %`);
const ms = (value: number | null) => (value === null ? '-' : `${value.toFixed(0)} ms`);

/** The human form of a rollout view: slots, the current step, its health, the last events. */
export function formatRolloutView(view: RolloutView): string {
  const lines: string[] = [];
  const rollout = view.rollout;
  if (rollout === null) lines.push(`${view.plugin}: no rollout yet (start one with 'quiver plugin upgrade ${view.plugin} --ref R')`);
  else {
    const step = `step ${rollout.step + 1}/${rollout.steps.length} (${rollout.steps[rollout.step]} %)`;
    const where =
      rollout.status === 'verifying'
        ? ': the new version is being verified and takes no traffic yet'
        : rollout.status === 'running' || rollout.status === 'paused'
          ? `, ${step}, canary traffic ${view.trafficPercent} %`
          : '';
    lines.push(`${view.plugin}: rollout ${rollout.status}${where}`);
    if (rollout.reason) lines.push(`reason: ${rollout.reason}`);
  }
  if (view.slots.length > 0) {
    lines.push(formatTable(['slot', 'version', 'status', 'traffic', 'health'], view.slots.map((slot) => [slot.slot, slot.version, slot.status, `${slot.trafficPercent} %`, slot.healthScore ?? '-'])));
  }
  if (view.health) {
    const { canary, stable } = view.health;
    lines.push(
      formatTable(
        ['this step', 'calls', 'errors', 'p50', 'p95', 'breaker refusals'],
        [
          ['stable', stable.calls, percentOf(stable), ms(stable.p50Ms), ms(stable.p95Ms), stable.breakerOpen],
          ['canary', canary.calls, percentOf(canary), ms(canary.p50Ms), ms(canary.p95Ms), canary.breakerOpen],
        ],
      ),
    );
  }
  for (const event of view.history.slice(0, 10)) lines.push(`${event.createdAt.toISOString()}  ${event.kind.padEnd(14)} ${event.message}`);
  return `${lines.join('\n')}\n`;
}

function print(context: CliContext, view: RolloutView): void {
  if (context.json) printJson(context.io, view);
  else context.io.stdout(formatRolloutView(view));
}

const upgrade: CommandSpec = {
  path: ['plugin', 'upgrade'],
  summary: 'Install a new version into the idle blue-green slot and roll it out (10 % → 50 % → 100 %), rolling back by itself if it degrades.',
  usage: 'NAME [--ref R | --version V]',
  options: {
    ref: { type: 'string', valueName: 'R', description: 'the git branch, tag or commit to upgrade to', defaultHelp: 'the latest of the current ref' },
    version: { type: 'string', valueName: 'V', description: 'the npm version or range to upgrade to', defaultHelp: 'the latest of the current spec' },
  },
  async run(context) {
    const name = needName(context, 'plugin upgrade NAME [--ref R | --version V]');
    const app = await context.openApp();
    const started = await app.rollouts.upgrade(name, { ref: stringOption(context, 'ref'), version: stringOption(context, 'version') });
    if (context.json) printJson(context.io, { ...started.view, warnings: started.warnings });
    else {
      context.io.stdout(formatRolloutView(started.view));
      for (const warning of started.warnings) context.io.stdout(`warning: ${warning}\n`);
      context.io.stdout(`the verification and the steps run in a running 'quiver serve'; follow them with 'quiver plugin rollout status ${name}'\n`);
    }
    return 0;
  },
};

/** A `plugin rollout <verb> NAME` command. */
function rolloutCommand(verb: 'status' | 'promote' | 'rollback' | 'pause' | 'resume', summary: string): CommandSpec {
  return {
    path: ['plugin', 'rollout', verb],
    summary,
    usage: verb === 'rollback' ? 'NAME [--reason TEXT]' : 'NAME',
    ...(verb === 'rollback' ? { options: { reason: { type: 'string' as const, valueName: 'TEXT', description: 'why, kept in the rollout history', defaultHelp: 'rolled back by an admin' } } } : {}),
    async run(context) {
      const name = needName(context, `plugin rollout ${verb} NAME`);
      const rollouts = (await context.openApp()).rollouts;
      const view =
        verb === 'status'
          ? await rollouts.status(name)
          : verb === 'rollback'
            ? await rollouts.rollback(name, stringOption(context, 'reason'))
            : await rollouts[verb](name);
      print(context, view);
      return 0;
    },
  };
}

/** The rollout commands. */
export const rolloutCommands: CommandSpec[] = [
  upgrade,
  rolloutCommand('status', "Show a plugin's blue and green slots (version, traffic, health), the current step's health and the rollout history."),
  rolloutCommand('promote', 'Promote the canary now: it takes all traffic and the catalog moves to its tools.'),
  rolloutCommand('rollback', 'Roll the open rollout back now: all traffic to the stable slot, the new version kept for inspection.'),
  rolloutCommand('pause', 'Hold the rollout at its current traffic share (no automatic step; a degrading canary is still rolled back).'),
  rolloutCommand('resume', 'Resume a paused rollout (its step is monitored again from now).'),
];
