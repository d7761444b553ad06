/**
 * @module cli/commands/users
 * `quiver user invite|list|update|disable|enable|reinvite|remove`: the accounts of the built-in
 * authorization server (issue #27). An invitation prints a one-time sign-up link (valid 7 days)
 * the admin hands to the user, who sets a password there and then signs in from any MCP client.
 */
import { invalidInput } from '../../core/errors.ts';
import type { AuthUser, Invitation } from '../../access/authorization-server/users.ts';
import type { QuiverConfig } from '../../config.ts';
import type { Queryable } from '../../store/database.ts';
import { formatTable, printJson, type CliContext, type CommandOptions, type CommandSpec } from '../command.ts';

/** The origin users reach Quiver at: QUIVER_AUTH_ISSUER, else where the built-in server last ran, else the configured bind. */
async function baseUrl(config: QuiverConfig, db: Queryable): Promise<string> {
  if (config.authServer.issuer) return config.authServer.issuer;
  const { lastIssuer } = await import('../../access/authorization-server/issuer-record.ts');
  const last = await lastIssuer(db);
  if (last) return last;
  const { host, port } = config.http;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

const roleOptions: CommandOptions = {
  org: { type: 'string', valueName: 'ORG', description: "the user's organisation (tokens act in it)" },
  role: { type: 'string', multiple: true, valueName: 'R', description: 'a role of the user, matched by policy rules' },
  scope: { type: 'string', multiple: true, valueName: 'S', description: "what the user's tokens may do: mcp, read, select or metrics (never admin)", defaultHelp: 'mcp' },
};

/** The user directory, loaded when a command runs (issue #28: the command list stays light). */
async function directory(context: CliContext) {
  const { createUserDirectory } = await import('../../access/authorization-server/users.ts');
  return createUserDirectory((await context.openApp()).db);
}

function printUser(context: CliContext, user: AuthUser): void {
  if (context.json) printJson(context.io, { user });
  else context.io.stdout(`${user.email} (${user.id}): ${user.status}, organisation ${user.orgId}, roles ${user.roles.join(',') || '-'}, scopes ${user.scopes.join(',')}\n`);
}

async function printInvitation(context: CliContext, invitation: Invitation): Promise<void> {
  const signupUrl = `${await baseUrl(context.config(), (await context.openApp()).db)}/oauth/signup?token=${invitation.token}`;
  if (context.json) printJson(context.io, { user: invitation.user, signupUrl, expiresAt: invitation.expiresAt });
  else context.io.stdout(`${signupUrl}\n(one-time sign-up link for ${invitation.user.email}, valid until ${invitation.expiresAt}; shown once)\n`);
}

const invite: CommandSpec = {
  path: ['user', 'invite'],
  summary: 'Invite a user of the built-in authorization server; prints a one-time sign-up link.',
  usage: 'EMAIL --org ORG [--role R]... [--scope S]...',
  options: roleOptions,
  async run(context) {
    const [email] = context.args.positionals;
    if (!email) throw invalidInput('user invite needs an EMAIL');
    const org = context.args.values.org as string | undefined;
    if (!org) throw invalidInput('user invite needs --org ORG: the organisation the user acts in');
    const invitation = await (await directory(context)).invite({
      email,
      orgId: org,
      roles: (context.args.values.role as string[] | undefined) ?? [],
      scopes: (context.args.values.scope as string[] | undefined) ?? ['mcp'],
    });
    await printInvitation(context, invitation);
    return 0;
  },
};

const list: CommandSpec = {
  path: ['user', 'list'],
  summary: 'List the users of the built-in authorization server.',
  usage: '',
  async run(context) {
    const users = await (await directory(context)).list();
    if (context.json) printJson(context.io, { users });
    else context.io.stdout(formatTable(['EMAIL', 'ID', 'STATUS', 'ORG', 'ROLES', 'SCOPES'], users.map((u) => [u.email, u.id, u.status, u.orgId, u.roles.join(','), u.scopes.join(',')])));
    return 0;
  },
};

const update: CommandSpec = {
  path: ['user', 'update'],
  summary: "Change a user's organisation, roles or scopes (their tokens follow at once).",
  usage: 'EMAIL|ID [--org ORG] [--role R]... [--scope S]...',
  options: roleOptions,
  async run(context) {
    const [id] = context.args.positionals;
    if (!id) throw invalidInput('user update needs an EMAIL or ID');
    const values = context.args.values;
    const change = {
      ...(values.org !== undefined ? { orgId: values.org } : {}),
      ...(values.role !== undefined ? { roles: values.role } : {}),
      ...(values.scope !== undefined ? { scopes: values.scope } : {}),
    };
    printUser(context, await (await directory(context)).update(id, change));
    return 0;
  },
};

const toggle = (disabled: boolean): CommandSpec => ({
  path: ['user', disabled ? 'disable' : 'enable'],
  summary: disabled ? 'Disable a user: no sign-in, and their tokens stop working.' : 'Enable a disabled user again.',
  usage: 'EMAIL|ID',
  async run(context) {
    const [id] = context.args.positionals;
    if (!id) throw invalidInput(`user ${disabled ? 'disable' : 'enable'} needs an EMAIL or ID`);
    printUser(context, await (await directory(context)).setDisabled(id, disabled));
    return 0;
  },
});

const reinvite: CommandSpec = {
  path: ['user', 'reinvite'],
  summary: 'Print a new one-time sign-up link for a user (a forgotten password).',
  usage: 'EMAIL|ID',
  async run(context) {
    const [id] = context.args.positionals;
    if (!id) throw invalidInput('user reinvite needs an EMAIL or ID');
    await printInvitation(context, await (await directory(context)).reinvite(id));
    return 0;
  },
};

const remove: CommandSpec = {
  path: ['user', 'remove'],
  summary: 'Remove a user (their tokens stop working).',
  usage: 'EMAIL|ID',
  async run(context) {
    const [id] = context.args.positionals;
    if (!id) throw invalidInput('user remove needs an EMAIL or ID');
    await (await directory(context)).remove(id);
    if (context.json) printJson(context.io, { removed: id });
    else context.io.stdout(`removed ${id}\n`);
    return 0;
  },
};

export const userCommands: CommandSpec[] = [invite, list, update, toggle(true), toggle(false), reinvite, remove];
