/**
 * @module cli/commands/trust
 * Trust and egress of a plugin (issue #10): `quiver plugin trust NAME` shows how its level came
 * about, `--level L` grants a level, `--cap L` limits it, `--clear` removes either (each with a
 * reason, recorded with who); `quiver plugin allow|deny NAME HOST[:PORT]` edits its enforced
 * allow-list; `quiver plugin egress NAME` lists rules and recent decisions; `quiver plugin
 * report NAME --reason …` flags it (lowers runtime trust, queues re-verification). Changes
 * apply when the plugin next starts: it restarts with the new isolation on its next call.
 */
import { invalidInput } from '../../core/errors.ts';
import type { TrustLevel } from '../../runtime/types.ts';
import type { TrustView } from '../../trust/types.ts';
import { cliActor, formatTable, printJson, stringOption, type CommandSpec } from '../command.ts';

const levelHelp = 'UNVERIFIED, COMMUNITY, ENTERPRISE, VERIFIED_PUBLISHER or OFFICIAL';

function describeView(view: TrustView): string {
  const lines = [
    `${view.plugin.name}: ${view.effective.level} (${view.isolation.sandbox ? `sandbox, network ${view.isolation.network}` : 'no sandbox, host network'})`,
    ...view.effective.steps.map((step) => `  ${step}`),
    `  verified score: ${view.verified.score ?? 'none'}; runtime trust: ${view.runtime ? `${view.runtime.score}${view.runtime.belowThreshold ? ' (below threshold)' : ''}` : 'not computed'}`,
    `  egress rules: ${view.egressRules}; ranking factor: ${view.rankingFactor}`,
  ];
  if (view.history.length > 0) {
    lines.push('', formatTable(['WHEN', 'KIND', 'LEVEL', 'WHO', 'WHY'], view.history.map((row) => [row.createdAt.toISOString(), row.kind, row.level ?? '-', row.actor, row.reason])).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

const trust: CommandSpec = {
  path: ['plugin', 'trust'],
  summary: 'Show a plugin\'s effective trust, or grant (--level), cap (--cap) or clear (--clear) it with a reason.',
  usage: 'NAME [--level L | --cap L | --clear] [--reason WHY] [--evaluate]',
  options: {
    level: { type: 'string', valueName: 'L', description: `grant this level (${levelHelp})` },
    cap: { type: 'string', valueName: 'L', description: 'limit the level to at most this one' },
    clear: { type: 'boolean', default: false, description: 'remove the grant or cap in force' },
    reason: { type: 'string', valueName: 'WHY', description: 'why (required for a change; recorded with who)' },
    evaluate: { type: 'boolean', default: false, description: 'recompute its runtime trust from recent behaviour first' },
  },
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin trust NAME [--level L | --cap L | --clear] --reason WHY');
    const level = stringOption(context, 'level');
    const cap = stringOption(context, 'cap');
    const clear = context.args.values['clear'] === true;
    const chosen = [level !== undefined, cap !== undefined, clear].filter(Boolean).length;
    if (chosen > 1) throw invalidInput('choose one of --level, --cap and --clear');
    const service = (await context.openApp()).trust;
    if (context.args.values['evaluate'] === true) await service.evaluate(name);
    let view: TrustView;
    if (chosen === 0) view = await service.view(name);
    else {
      const reason = stringOption(context, 'reason');
      if (reason === undefined) throw invalidInput('a trust change needs --reason WHY (recorded with who made it)');
      const given = level ?? cap;
      // Loaded when it runs (issue #28: the command list stays light).
      const { trustLevelSchema } = await import('../../runtime/types.ts');
      const parsed = given === undefined ? undefined : trustLevelSchema.safeParse(given.toUpperCase());
      if (parsed !== undefined && !parsed.success) throw invalidInput(`'${given}' is not a trust level (${levelHelp})`);
      view = await service.setTrust(name, { kind: clear ? 'clear' : level !== undefined ? 'grant' : 'cap', level: parsed?.data, reason, actor: cliActor() });
    }
    if (context.json) printJson(context.io, view);
    else context.io.stdout(`${describeView(view)}${chosen > 0 ? 'the plugin restarts with this isolation on its next call\n' : ''}`);
    return 0;
  },
};

/** Why an allow-list rule does not act on this plugin now, and what would make it act. */
function egressNote(name: string, level: TrustLevel, remote: boolean): string {
  if (remote) return `${name} has no process in Quiver's sandbox (a remote or synced plugin), so the rule has nothing to hold; rules apply to plugins Quiver runs`;
  return `${name} runs at ${level}, which has no network at all; the rule takes effect once it runs at COMMUNITY or above ('quiver plugin verify ${name}', or 'quiver plugin trust ${name}')`;
}

const allow: CommandSpec = {
  path: ['plugin', 'allow'],
  summary: 'Let a sandboxed plugin connect to HOST[:PORT] (default port 443), enforced by its sandbox.',
  usage: 'NAME HOST[:PORT] [--reason WHY]',
  options: { reason: { type: 'string', valueName: 'WHY', description: 'why (recorded with who)' } },
  async run(context) {
    const [name, target] = context.args.positionals;
    if (!name || !target) throw invalidInput('usage: quiver plugin allow NAME HOST[:PORT] [--reason WHY]');
    const service = (await context.openApp()).trust;
    const reason = stringOption(context, 'reason');
    const { rule, created } = await service.allow(name, target, { actor: cliActor(), ...(reason !== undefined ? { reason } : {}) });
    const { enforced, level, remote } = await service.egress(name, { limit: 1 });
    if (context.json) printJson(context.io, { plugin: name, rule, created, enforced, level, remote });
    else {
      context.io.stdout(`${created ? 'allowed' : 'already allowed:'} ${name} → ${rule.host}:${rule.port}${created && !remote ? '; the plugin restarts with it on its next call' : ''}\n`);
      if (!enforced) context.io.stdout(`note: ${egressNote(name, level, remote)}\n`);
    }
    return 0;
  },
};

const deny: CommandSpec = {
  path: ['plugin', 'deny'],
  summary: 'Remove HOST[:PORT] from a plugin\'s egress allow-list.',
  usage: 'NAME HOST[:PORT]',
  async run(context) {
    const [name, target] = context.args.positionals;
    if (!name || !target) throw invalidInput('usage: quiver plugin deny NAME HOST[:PORT]');
    const removed = await (await context.openApp()).trust.deny(name, target);
    if (context.json) printJson(context.io, { plugin: name, target, removed });
    else context.io.stdout(removed ? `removed ${target} from ${name}'s allow-list; the plugin restarts without it on its next call\n` : `${target} was not on ${name}'s allow-list\n`);
    return 0;
  },
};

const egress: CommandSpec = {
  path: ['plugin', 'egress'],
  summary: 'List a plugin\'s egress rules and its recent allowed and denied connections.',
  usage: 'NAME [--limit N]',
  options: { limit: { type: 'string', valueName: 'N', description: 'decisions to show (1–1000)', defaultHelp: '50' } },
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin egress NAME [--limit N]');
    const limitText = stringOption(context, 'limit');
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidInput('--limit must be a whole number from 1 to 1000');
    const result = await (await context.openApp()).trust.egress(name, { limit });
    if (context.json) {
      printJson(context.io, result);
      return 0;
    }
    const out: string[] = [`${name}: allow-list ${result.enforced ? 'enforced' : 'not enforced at its current level'}`];
    out.push(result.rules.length === 0 ? 'no rules' : formatTable(['HOST', 'PORT', 'WHO', 'WHY', 'ADDED'], result.rules.map((r) => [r.host, String(r.port), r.actor, r.reason, r.createdAt.toISOString()])).trimEnd());
    if (result.decisions.length > 0) {
      out.push('', formatTable(['WHEN', 'DESTINATION', 'DECISION'], result.decisions.map((d) => [d.createdAt.toISOString(), d.port === 0 ? `${d.host} (name lookup)` : `${d.host}:${d.port}`, d.allowed ? 'allowed' : 'denied'])).trimEnd());
    }
    context.io.stdout(`${out.join('\n')}\n`);
    return 0;
  },
};

const report: CommandSpec = {
  path: ['plugin', 'report'],
  summary: 'Report a misbehaving plugin: lowers its runtime trust and queues a re-verification.',
  usage: 'NAME --reason WHY',
  options: { reason: { type: 'string', valueName: 'WHY', description: 'what it did (required)' } },
  async run(context) {
    const [name] = context.args.positionals;
    const reason = stringOption(context, 'reason');
    if (!name || reason === undefined) throw invalidInput('usage: quiver plugin report NAME --reason WHY');
    const result = await (await context.openApp()).trust.report(name, { reason, actor: cliActor() });
    if (context.json) printJson(context.io, result);
    else context.io.stdout(`reported ${name}; runtime trust now ${result.runtime.score}${result.runtime.belowThreshold ? ' (below threshold: more isolation at its next start)' : ''}; re-verification queued\n`);
    return 0;
  },
};

/** The trust and egress commands. */
export const trustCommands: CommandSpec[] = [trust, allow, deny, egress, report];
