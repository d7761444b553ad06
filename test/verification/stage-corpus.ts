/**
 * @module test/verification/stage-corpus
 * Small plugins built in the tests for the static-analysis and security-scan stages (issue
 * #10): a folder with a package.json, a tiny MCP server (`server.mjs`, newline-delimited
 * JSON-RPC over stdio, serving the tools it was built with), optional extra files and vendored
 * dependency packages under node_modules. `listTools` starts the server for real and lists its
 * tools over stdio with the MCP SDK client, so a subject's tools are what the plugin serves.
 * `startAdvisoryServer` is a local HTTP server speaking the npm bulk advisory wire format.
 */
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { silentLogger } from '../../src/core/logger.ts';
import type { StageContext, SubjectTool, VerificationSettings, VerificationSubject } from '../../src/verification/types.ts';

/** A dependency package vendored under node_modules. */
export interface VendoredPackage {
  name: string;
  version: string;
  license?: unknown;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  files?: Record<string, string>;
}

/** What a corpus plugin is made of. */
export interface CorpusPlugin {
  name: string;
  license?: unknown;
  scripts?: Record<string, string>;
  tools: SubjectTool[];
  /** Extra files of the plugin (relative path → content). */
  files?: Record<string, string>;
  dependencies?: VendoredPackage[];
}

/** The server: answers initialize and tools/list with the tools it was built with; nothing else. */
function serverSource(tools: readonly SubjectTool[]): string {
  return [
    `const tools = ${JSON.stringify(tools)};`,
    "let buffer = '';",
    "process.stdin.setEncoding('utf8');",
    "process.stdin.on('data', (chunk) => {",
    '  buffer += chunk;',
    "  let index;",
    "  while ((index = buffer.indexOf('\\n')) >= 0) {",
    '    const line = buffer.slice(0, index).trim();',
    '    buffer = buffer.slice(index + 1);',
    '    if (line === "") continue;',
    '    const message = JSON.parse(line);',
    '    if (message.id === undefined) continue;',
    "    let result;",
    "    if (message.method === 'initialize') result = { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'corpus', version: '1.0.0' } };",
    "    else if (message.method === 'tools/list') result = { tools };",
    "    const reply = result === undefined ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'not found' } } : { jsonrpc: '2.0', id: message.id, result };",
    "    process.stdout.write(JSON.stringify(reply) + '\\n');",
    '  }',
    '});',
    '',
  ].join('\n');
}

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** Builds a corpus plugin in a new temp folder; returns the folder. */
export async function buildCorpusPlugin(plugin: CorpusPlugin): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), `quiver-corpus-${plugin.name}-`));
  await chmod(root, 0o755);
  const manifest = {
    name: plugin.name,
    version: '1.0.0',
    type: 'module',
    bin: { [plugin.name]: 'server.mjs' },
    ...(plugin.license === undefined ? { license: 'MIT' } : plugin.license === null ? {} : { license: plugin.license }),
    ...(plugin.scripts === undefined ? {} : { scripts: plugin.scripts }),
    dependencies: Object.fromEntries((plugin.dependencies ?? []).map((dep) => [dep.name, dep.version])),
  };
  await writeFiles(root, { 'package.json': JSON.stringify(manifest, null, 2), 'server.mjs': serverSource(plugin.tools), ...plugin.files });
  for (const dep of plugin.dependencies ?? []) {
    const depManifest = { name: dep.name, version: dep.version, license: dep.license ?? 'MIT', main: 'index.js', ...(dep.scripts ? { scripts: dep.scripts } : {}), ...(dep.dependencies ? { dependencies: dep.dependencies } : {}) };
    await writeFiles(join(root, 'node_modules', dep.name), { 'package.json': JSON.stringify(depManifest), 'index.js': 'module.exports = {};\n', ...dep.files });
  }
  return root;
}

/** Lists the tools a corpus plugin serves by starting it over stdio. */
export async function listTools(root: string): Promise<SubjectTool[]> {
  const client = new Client({ name: 'corpus-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(root, 'server.mjs')], cwd: root, stderr: 'ignore' }));
  try {
    return (await client.listTools()).tools as SubjectTool[];
  } finally {
    await client.close();
  }
}

/** A subject for a plugin folder, with the tools it serves. */
export async function subjectFor(root: string, name: string, extra: Partial<VerificationSubject> = {}): Promise<VerificationSubject> {
  return {
    pluginId: `id-${name}`,
    pluginName: name,
    version: '1.0.0',
    sourceType: 'path',
    source: { path: root },
    codeDir: root,
    manifest: null,
    intelligence: null,
    tools: await listTools(root),
    otherToolNames: [],
    launch: null,
    ...extra,
  };
}

/** A stage context around a subject; progress lines are collected. */
export function contextFor(subject: VerificationSubject, settings: Partial<VerificationSettings> = {}): StageContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    subject,
    settings: { registryUrl: 'http://127.0.0.1:9', licenseAllowList: ['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD'], stageTimeoutMs: 10_000, ...settings },
    logger: silentLogger,
    signal: new AbortController().signal,
    progress: (line) => lines.push(line),
    lines,
  };
}

/** A local registry answering the bulk advisory endpoint from a table; records what it was asked. */
export interface AdvisoryServer {
  url: string;
  requests: Array<Record<string, string[]>>;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text;
}

/** Starts the advisory server; `table[name][version]` lists the advisories of that version; `status` forces an error status. */
export async function startAdvisoryServer(table: Record<string, Record<string, unknown[]>>, options: { status?: number } = {}): Promise<AdvisoryServer> {
  const requests: Array<Record<string, string[]>> = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/-/npm/v1/security/advisories/bulk') {
        response.writeHead(404).end();
        return;
      }
      const asked = JSON.parse(await body(request)) as Record<string, string[]>;
      requests.push(asked);
      if (options.status !== undefined) {
        response.writeHead(options.status).end('{}');
        return;
      }
      const answer: Record<string, unknown[]> = {};
      for (const [name, versions] of Object.entries(asked)) {
        const found = versions.flatMap((version) => table[name]?.[version] ?? []);
        if (found.length > 0) answer[name] = found;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Removes corpus folders. */
export async function removeAll(folders: readonly string[]): Promise<void> {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
}
