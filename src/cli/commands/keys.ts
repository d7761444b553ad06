/**
 * @module cli/commands/keys
 * `quiver keys create|list|revoke`: API keys, managed directly on the store.
 */
import { invalidInput } from '../../core/errors.ts';
import type { ApiScope } from '../../access/api-keys.ts';
import { formatTable, printJson, type CommandSpec } from '../command.ts';

const create: CommandSpec = {
  path: ['keys', 'create'],
  summary: 'Create an API key (printed once). Scopes: admin, read, select, mcp.',
  usage: 'NAME [--scope S]... [--org ORG] [--user USER] [--workspace-id ID] [--role R]... [--tier T]',
  options: {
    scope: { type: 'string', multiple: true, valueName: 'S', description: 'what the key may do: admin, read, select, mcp or metrics (reads /metrics only)', defaultHelp: 'select and mcp' },
    org: { type: 'string', valueName: 'ORG', description: 'bind the key to this organisation id (policy and visibility)' },
    user: { type: 'string', valueName: 'USER', description: 'bind the key to this user id' },
    'workspace-id': { type: 'string', valueName: 'ID', description: 'bind the key to this workspace (its MCP sessions use it)', defaultHelp: 'the default workspace' },
    role: { type: 'string', multiple: true, valueName: 'R', description: 'a role of the key, matched by policy rules' },
    tier: { type: 'string', valueName: 'T', description: 'the plan tier of the key, matched by policy rules' },
  },
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('keys create needs a NAME');
    const scopes = (context.args.values.scope as string[] | undefined) ?? ['select', 'mcp'];
    // Loaded when it runs (issue #28: the command list stays light).
    const { API_SCOPES } = await import('../../access/api-keys.ts');
    for (const scope of scopes) {
      if (!(API_SCOPES as readonly string[]).includes(scope)) throw invalidInput(`unknown scope '${scope}' (use ${API_SCOPES.join(', ')})`);
    }
    const app = await context.openApp();
    const { key, record } = await app.apiKeys.create({
      name,
      scopes: scopes as ApiScope[],
      orgId: (context.args.values.org as string | undefined) ?? null,
      userId: (context.args.values.user as string | undefined) ?? null,
      workspaceId: (context.args.values['workspace-id'] as string | undefined) ?? null,
      roles: (context.args.values.role as string[] | undefined) ?? [],
      tier: (context.args.values.tier as string | undefined) ?? null,
    });
    if (context.json) printJson(context.io, { key, record });
    else context.io.stdout(`${key}\n(id ${record.id}; shown once)\n`);
    return 0;
  },
};

const list: CommandSpec = {
  path: ['keys', 'list'],
  summary: 'List API keys (no secrets).',
  usage: '',
  async run(context) {
    const app = await context.openApp();
    const keys = await app.apiKeys.list();
    if (context.json) printJson(context.io, { keys });
    else
      context.io.stdout(
        formatTable(
          ['ID', 'NAME', 'PREFIX', 'SCOPES', 'ORG', 'REVOKED'],
          keys.map((k) => [k.id, k.name, k.prefix, k.scopes.join(','), k.orgId, k.revokedAt?.toISOString()]),
        ),
      );
    return 0;
  },
};

const revoke: CommandSpec = {
  path: ['keys', 'revoke'],
  summary: 'Revoke an API key by id.',
  usage: 'ID',
  async run(context) {
    const [id] = context.args.positionals;
    if (!id) throw invalidInput('keys revoke needs an ID');
    const app = await context.openApp();
    await app.apiKeys.revoke(id);
    if (context.json) printJson(context.io, { revoked: id });
    else context.io.stdout(`revoked ${id}\n`);
    return 0;
  },
};

export const keysCommands: CommandSpec[] = [create, list, revoke];
