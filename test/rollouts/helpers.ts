/**
 * @module test/rollouts/helpers
 * Real things for the rollout tests (issue #11): a real git repository built from
 * test/fixtures/rollout-plugin with one tag per version (each tag its own fixture.json), a real
 * app served over HTTP, and real MCP sessions (SDK clients over Streamable HTTP) that call a
 * tool in a loop and record what answered: which version, whether it failed, which tool lists
 * they saw.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const fixture = join(repoRoot, 'test/fixtures/rollout-plugin');

/** What one tagged version of the fixture does (fixture.json). */
export interface FixtureVersion {
  tag: string;
  version: string;
  tools: string[];
  failEvery?: number;
  delayMs?: number;
  /** Tool descriptions replacing the fixture's (a poisoned version). */
  descriptions?: Record<string, string>;
  /** The notes resource declared with another description (a changed declaration, issue #29). */
  noteDescription?: string;
  /** The intelligence document this version ships in its quiver.json (its own execution profile). */
  intelligence?: Record<string, unknown>;
}

async function git(args: string[], cwd: string): Promise<string> {
  const env = { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'Quiver Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Quiver Test', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };
  return (await run('git', args, { cwd, env })).stdout.trim();
}

/** A bare repository with one commit and tag per version, in order; returns its path. */
export async function createTaggedRepo(root: string, versions: readonly FixtureVersion[]): Promise<string> {
  const remote = join(root, 'remote.git');
  const work = join(root, 'work');
  await mkdir(work, { recursive: true });
  await git(['init', '--quiet', '--bare', '--initial-branch=main', remote], root);
  await git(['init', '--quiet', '--initial-branch=main'], work);
  await cp(fixture, work, { recursive: true });
  await git(['remote', 'add', 'origin', remote], work);
  for (const version of versions) {
    const { tag, intelligence, ...behaviour } = version;
    await writeFile(join(work, 'fixture.json'), `${JSON.stringify(behaviour)}\n`);
    // quiver.json's version is the plugin's version (with the commit): one per tag.
    const { intelligence: _previous, ...manifest } = JSON.parse(await readFile(join(work, 'quiver.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(work, 'quiver.json'), `${JSON.stringify({ ...manifest, version: version.version, ...(intelligence === undefined ? {} : { intelligence }) }, null, 2)}\n`);
    await git(['add', '-A'], work);
    await git(['commit', '--quiet', '--allow-empty', '-m', `version ${version.version}`], work);
    await git(['tag', tag], work);
  }
  await git(['push', '--quiet', 'origin', 'main', '--tags'], work);
  return remote;
}

/** One call a session made. */
export interface CallRecord {
  at: number;
  /** When the answer (or the failure) arrived. */
  doneAt: number;
  ok: boolean;
  /** The version that answered (`1.0.0`), when it answered. */
  version: string | undefined;
  error?: string;
}

/** A real MCP session calling `tool` in a loop. */
export interface TrafficSession {
  client: Client;
  sessionId: string;
  calls: CallRecord[];
  /** Tool lists this session saw (sorted names, joined). */
  toolLists: string[];
}

/** Sessions that call a tool continuously until stopped. */
export interface Traffic {
  sessions: TrafficSession[];
  /** Every call of every session in [from, to). */
  callsBetween(from: number, to: number): Array<CallRecord & { sessionId: string }>;
  stop(): Promise<void>;
}

const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * Opens sessions against `/mcp` until `canaries` of them satisfy `isCanary` and `others` do not
 * (extra sessions are closed unused), then starts every kept session calling `tool` every `pauseMs`.
 */
export async function startTraffic(
  url: string,
  key: string,
  options: { tool: string; pauseMs: number; others: number; canaries?: number; isCanary?: (sessionId: string) => boolean },
): Promise<Traffic> {
  const sessions: TrafficSession[] = [];
  const loops: Array<Promise<void>> = [];
  let running = true;

  async function loop(session: TrafficSession): Promise<void> {
    let iteration = 0;
    while (running) {
      const at = Date.now();
      try {
        const result = (await session.client.callTool({ name: options.tool, arguments: { a: 2, b: 3 } })) as CallToolResult;
        const body = text(result);
        session.calls.push({ at, doneAt: Date.now(), ok: result.isError !== true, version: /\(v([^)]+)\)/.exec(body)?.[1], ...(result.isError ? { error: body } : {}) });
      } catch (error) {
        if (!running) break;
        session.calls.push({ at, doneAt: Date.now(), ok: false, version: undefined, error: (error as Error).message });
      }
      if (iteration++ % 10 === 0 && running) {
        const names = await session.client.listTools().then((listed) => listed.tools.map((tool) => tool.name).sort(), () => undefined);
        if (names !== undefined) session.toolLists.push(names.join(','));
      }
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  }

  async function open(): Promise<TrafficSession> {
    const client = new Client({ name: 'rollout-traffic', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    return { client, sessionId: transport.sessionId!, calls: [], toolLists: [] };
  }

  const isCanary = options.isCanary ?? (() => false);
  let canaries = 0;
  let others = 0;
  while (canaries < (options.canaries ?? 0) || others < options.others) {
    const session = await open();
    const canary = isCanary(session.sessionId);
    if (canary ? canaries >= (options.canaries ?? 0) : others >= options.others) {
      await session.client.close();
      continue;
    }
    if (canary) canaries++;
    else others++;
    sessions.push(session);
  }
  for (const session of sessions) loops.push(loop(session));
  return {
    sessions,
    callsBetween: (from, to) => sessions.flatMap((session) => session.calls.filter((call) => call.at >= from && call.at < to).map((call) => ({ ...call, sessionId: session.sessionId }))),
    async stop() {
      running = false;
      await Promise.all(loops);
      await Promise.all(sessions.map((session) => session.client.close().catch(() => undefined)));
    },
  };
}

/** Polls `check` every 50 ms until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
