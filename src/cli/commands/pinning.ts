/**
 * @module cli/commands/pinning
 * Tool pinning (issue #10): `quiver plugin quarantine [NAME]` lists the tools whose served
 * definition differs from the approved one (or that were never approved), each with a readable
 * diff; `quiver plugin approve NAME [TOOL…]` approves the served definitions, recorded with who.
 */
import { invalidInput } from '../../core/errors.ts';
import type { QuarantinedTool } from '../../trust/pinning/index.ts';
import { formatDiff } from '../../trust/pinning/diff.ts';
import { cliActor, printJson, type CommandSpec } from '../command.ts';

/** One quarantined tool as text: name, reason, then the diff (`-` approved, `+` served). */
function describe(tool: QuarantinedTool): string[] {
  const approvedBy = tool.approved === null ? 'never approved' : `approved by ${tool.approved.by ?? '?'} at ${tool.approved.at ?? '?'} (${tool.approved.source ?? '?'})`;
  return [`${tool.plugin}__${tool.tool} (${tool.kind}; ${approvedBy}; quarantined ${tool.quarantinedAt})`, `  reason: ${tool.reason}`, ...formatDiff(tool.diff), ''];
}

const quarantine: CommandSpec = {
  path: ['plugin', 'quarantine'],
  summary: 'List quarantined tools (served definition differs from the approved one) with a diff of approved vs served.',
  usage: '[NAME]',
  async run(context) {
    const [name] = context.args.positionals;
    const tools = await (await context.openApp()).pinning.quarantined(name);
    if (context.json) printJson(context.io, { tools });
    else if (tools.length === 0) context.io.stdout(`No quarantined tools${name === undefined ? '' : ` in ${name}`}.\n`);
    else context.io.stdout(`${tools.flatMap(describe).join('\n')}\n`);
    return 0;
  },
};


const approve: CommandSpec = {
  path: ['plugin', 'approve'],
  summary: 'Approve the served definitions of quarantined tools of a plugin (all of them unless tools are named).',
  usage: 'NAME [TOOL…] [--by WHO]',
  options: { by: { type: 'string', valueName: 'WHO', description: 'who approves (recorded); default: the operating-system user' } },
  async run(context) {
    const [name, ...tools] = context.args.positionals;
    if (!name) throw invalidInput('usage: quiver plugin approve NAME [TOOL…]');
    const by = context.args.values['by'];
    const result = await (await context.openApp()).pinning.approve(name, tools, cliActor(typeof by === 'string' ? by : undefined));
    if (context.json) printJson(context.io, result);
    else if (result.approved.length === 0) context.io.stdout(`Nothing to approve: ${name} has no quarantined tools.\n`);
    else context.io.stdout(`approved ${result.approved.join(', ')} of ${name} (by ${result.by}); served from now on\n`);
    return 0;
  },
};

/** The pinning commands. */
export const pinningCommands: CommandSpec[] = [quarantine, approve];
