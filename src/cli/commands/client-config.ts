/**
 * @module cli/commands/client-config
 * `quiver client config claude|cursor|vscode [--http]`: prints the JSON that points an MCP
 * client at this Quiver, in that client's own file format:
 * - claude: `claude_desktop_config.json` (`mcpServers`); with --http, Claude Code's `.mcp.json`
 *   remote entry (`type: "http"`);
 * - cursor: `~/.cursor/mcp.json` or `.cursor/mcp.json` (`mcpServers`, `url` for remote);
 * - vscode: `.vscode/mcp.json` (`servers` with `type`; the key comes from a VS Code `inputs`
 *   prompt, so it is never written into the file).
 * stdio runs this checkout's `bin/quiver.mjs` by absolute path with this Node, so no PATH or npx
 * is needed, and keeps the `QUIVER_HOME` / `QUIVER_DATA_DIR` this command was given in the
 * entry's `env` (issue #26: a client starts it elsewhere, with its own environment); --http uses
 * the configured host and port (`QUIVER_HOST`, `QUIVER_PORT`, default `http://127.0.0.1:7411/mcp`)
 * or --url, with a placeholder for a key holding the `mcp` scope. Only the snippet goes to
 * stdout; where it goes is said on stderr.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PORT, isPublicBindHost } from '../../core/bind-host.ts';
import { invalidInput } from '../../core/errors.ts';
import { printJson, type CommandSpec } from '../command.ts';

/** The clients `client config` knows. */
export const CLIENTS = ['claude', 'cursor', 'vscode'] as const;
export type ClientName = (typeof CLIENTS)[number];

/** The placeholder printed where the API key goes. */
export const KEY_PLACEHOLDER = 'QUIVER_API_KEY';

/** What the snippet points at. */
export type ClientTarget = { kind: 'stdio'; command: string; args: string[]; env?: Record<string, string> } | { kind: 'http'; url: string };

/** The environment of Quiver's own location that the stdio entry must carry (absolute paths). */
const LOCATION_ENV = ['QUIVER_HOME', 'QUIVER_DATA_DIR'] as const;

/** The `/mcp` URL of the configured HTTP server; a server bound to every interface is reached on loopback. */
export function configuredMcpUrl(http: { host: string; port: number }): string {
  const host = isPublicBindHost(http.host) ? '127.0.0.1' : http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${http.port}/mcp`;
}

/** The client's configuration document for one target (pure). */
export function clientSnippet(client: ClientName, target: ClientTarget, name = 'quiver'): Record<string, unknown> {
  if (target.kind === 'stdio') {
    const server = { command: target.command, args: target.args, ...(target.env && Object.keys(target.env).length > 0 ? { env: target.env } : {}) };
    return client === 'vscode' ? { servers: { [name]: { type: 'stdio', ...server } } } : { mcpServers: { [name]: server } };
  }
  switch (client) {
    case 'vscode':
      return {
        inputs: [{ type: 'promptString', id: 'quiver-api-key', description: 'Quiver API key (mcp scope)', password: true }],
        servers: { [name]: { type: 'http', url: target.url, headers: { Authorization: 'Bearer ${input:quiver-api-key}' } } },
      };
    case 'cursor':
      return { mcpServers: { [name]: { url: target.url, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } } };
    default:
      return { mcpServers: { [name]: { type: 'http', url: target.url, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } } };
  }
}

const whereItGoes: Record<ClientName, { stdio: string; http: string }> = {
  claude: {
    stdio: 'Claude Desktop: merge into claude_desktop_config.json (Settings → Developer → Edit Config), then restart Claude.',
    http: "Claude Code: merge into .mcp.json (or run 'claude mcp add --transport http'); Claude Desktop adds remote servers under Settings → Connectors.",
  },
  cursor: { stdio: 'Cursor: merge into ~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project).', http: 'Cursor: merge into ~/.cursor/mcp.json or .cursor/mcp.json.' },
  vscode: { stdio: 'VS Code: merge into .vscode/mcp.json (or run "MCP: Open User Configuration").', http: 'VS Code: merge into .vscode/mcp.json; VS Code asks for the key once and stores it itself.' },
};

/** `bin/quiver.mjs` of this checkout, by absolute path. */
export function quiverBinPath(): string {
  return fileURLToPath(new URL('../../../bin/quiver.mjs', import.meta.url));
}

/** `quiver client config`. */
export const clientConfigCommand: CommandSpec = {
  path: ['client', 'config'],
  summary: 'Print the JSON that points an MCP client (claude, cursor, vscode) at this Quiver, over stdio or --http.',
  usage: 'claude|cursor|vscode [--http] [--url URL] [--name N]',
  storeless: true,
  forwardable: false,
  options: {
    http: { type: 'boolean', default: false, description: 'connect over Streamable HTTP to a running `quiver serve` instead of starting `quiver serve --stdio`' },
    url: { type: 'string', valueName: 'URL', description: 'the MCP endpoint for --http', defaultHelp: `http://127.0.0.1:${DEFAULT_PORT}/mcp, or QUIVER_HOST/QUIVER_PORT` },
    name: { type: 'string', valueName: 'N', description: 'the server name in the client', defaultHelp: 'quiver' },
  },
  async run(context) {
    const [client] = context.args.positionals;
    if (!client || !(CLIENTS as readonly string[]).includes(client)) throw invalidInput(`usage: quiver client config ${CLIENTS.join('|')} [--http]`);
    const values = context.args.values;
    const http = values.http === true;
    const name = typeof values.name === 'string' ? values.name : 'quiver';
    let target: ClientTarget;
    if (http) {
      const url = typeof values.url === 'string' ? values.url : configuredMcpUrl(context.config().http);
      if (!/^https?:\/\/[^\s]+$/.test(url)) throw invalidInput(`--url '${url}' is not an http(s) URL`);
      target = { kind: 'http', url };
    } else {
      if (typeof values.url === 'string') throw invalidInput('--url applies to --http only');
      const bin = quiverBinPath();
      if (!existsSync(bin)) throw invalidInput(`this checkout has no ${bin}`);
      // The same data the user chose for this command: a client started elsewhere must open it too.
      const dataArgs = [
        ...(typeof values.data === 'string' ? ['--data', values.data] : []),
        ...(typeof values['database-url'] === 'string' ? ['--database-url', values['database-url']] : []),
      ];
      const env: Record<string, string> = {};
      for (const name of LOCATION_ENV) {
        const value = context.env[name];
        if (value) env[name] = resolve(context.cwd, value);
      }
      target = { kind: 'stdio', command: process.execPath, args: [bin, 'serve', '--stdio', ...dataArgs], env };
    }
    printJson(context.io, clientSnippet(client as ClientName, target, name));
    const hints = [whereItGoes[client as ClientName][http ? 'http' : 'stdio']];
    if (http && client !== 'vscode') hints.push(`Replace ${KEY_PLACEHOLDER} with a key holding the mcp scope: quiver keys create ${client} --scope mcp`);
    if (http && client === 'vscode') hints.push('Create the key it asks for with: quiver keys create vscode --scope mcp');
    context.io.stderr(`${hints.join('\n')}\n`);
    return 0;
  },
};
