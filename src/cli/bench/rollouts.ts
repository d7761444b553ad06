/**
 * @module cli/bench/rollouts
 * Blue-green upgrades under live traffic (issue #11; DESIGN §6 "failed client calls during a
 * healthy blue-green upgrade: 0"). A real `quiver serve` on the embedded default with a plugin
 * installed from a real git repository (test/fixtures/rollout-plugin, one tag per version), and
 * MCP SDK sessions on `/mcp` calling it continuously, two of them in the canary's 10 % share.
 * Measured: failed client calls during a healthy upgrade (v1 → v2, promoted) and during a bad
 * one (v3 fails every third call, rolled back), the canary's share of the calls in that window,
 * and the time from the first failed call to the rollback. Step windows are shortened (3 s).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseJsonText } from '../../core/validation.ts';
import { bucketOf, type RolloutView } from '../../rollouts/index.ts';
import { QUIVER_BIN, createMcpKey, withBenchHome, type BenchHome } from './bench-home.ts';

const run = promisify(execFile);
const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/rollout-plugin/', import.meta.url));

/** What the bench reports. */
export interface RolloutsBench {
  sessions: number;
  canarySessions: number;
  healthy: { calls: number; failed: number; promotedAfterMs: number };
  bad: { calls: number; failed: number; canaryShare: number; failedShare: number; degradationToRollbackMs: number | null; reason: string | null };
  setup: string;
}

interface Call {
  at: number;
  ok: boolean;
  session: number;
}

async function git(args: string[], cwd: string): Promise<void> {
  const env = { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'Quiver Bench', GIT_AUTHOR_EMAIL: 'b@example.invalid', GIT_COMMITTER_NAME: 'Quiver Bench', GIT_COMMITTER_EMAIL: 'b@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };
  await run('git', args, { cwd, env });
}

/** A bare repository with tags v1.0.0 (healthy), v2.0.0 (healthy, one more tool), v3.0.0 (fails every third call). */
async function createRepo(root: string): Promise<string> {
  const remote = join(root, 'remote.git');
  const work = join(root, 'work');
  await mkdir(work, { recursive: true });
  await git(['init', '--quiet', '--bare', '--initial-branch=main', remote], root);
  await git(['init', '--quiet', '--initial-branch=main'], work);
  await cp(FIXTURE, work, { recursive: true });
  await git(['remote', 'add', 'origin', remote], work);
  const manifest = parseJsonText(await readFile(join(work, 'quiver.json'), 'utf8'), 'quiver.json') as Record<string, unknown>;
  for (const [version, behaviour] of [
    ['1.0.0', { tools: ['add', 'echo'] }],
    ['2.0.0', { tools: ['add', 'echo', 'product'] }],
    ['3.0.0', { tools: ['add', 'echo', 'product'], failEvery: 3 }],
  ] as const) {
    await writeFile(join(work, 'fixture.json'), `${JSON.stringify({ version, ...behaviour })}\n`);
    await writeFile(join(work, 'quiver.json'), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
    await git(['add', '-A'], work);
    await git(['commit', '--quiet', '-m', `version ${version}`], work);
    await git(['tag', `v${version}`], work);
  }
  await git(['push', '--quiet', 'origin', 'main', '--tags'], work);
  return remote;
}

function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, 'serve', '--json', '--http', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('close', (code) => reject(new Error(`quiver serve exited with ${code}: ${err.slice(-400)}`)));
  });
}

async function status(home: BenchHome): Promise<RolloutView> {
  return parseJsonText(await home.quiver(['plugin', 'rollout', 'status', 'calc', '--json']), 'rollout status') as RolloutView;
}

async function until(home: BenchHome, wanted: string, timeoutMs: number): Promise<RolloutView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await status(home);
    if (view.rollout?.status === wanted) return view;
    if (Date.now() > deadline) throw new Error(`the rollout did not reach '${wanted}' in ${timeoutMs} ms (it is ${view.rollout?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Opens sessions until `canaries` fall in the plugin's 10 % bucket and `others` do not. */
async function openSessions(url: string, key: string, pluginId: string, canaries: number, others: number): Promise<Array<{ client: Client; canary: boolean }>> {
  const kept: Array<{ client: Client; canary: boolean }> = [];
  let counts = { canary: 0, other: 0 };
  while (counts.canary < canaries || counts.other < others) {
    const client = new Client({ name: 'rollout-bench', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    const canary = bucketOf(pluginId, transport.sessionId!) < 10;
    if (canary ? counts.canary >= canaries : counts.other >= others) {
      await client.close();
      continue;
    }
    counts = canary ? { ...counts, canary: counts.canary + 1 } : { ...counts, other: counts.other + 1 };
    kept.push({ client, canary });
  }
  return kept;
}

/** Runs the healthy and the bad upgrade under traffic and reports the failed calls of each. */
export async function benchRollouts(options: { others?: number; canaries?: number } = {}): Promise<RolloutsBench> {
  const others = options.others ?? 18;
  const canaries = options.canaries ?? 2;
  return withBenchHome([], async (home) => {
    const remote = await createRepo(join(home.home, 'repo'));
    await home.quiver(['plugin', 'add', remote, '--name', 'calc', '--ref', 'v1.0.0', '--json']);
    await home.quiver(['workspace', 'set', 'default', '--exposure', 'all']);
    const key = await createMcpKey(home, 'rollout-bench');
    const env = { ...home.env, QUIVER_ROLLOUT_STEP_WINDOW_MS: '3000', QUIVER_ROLLOUT_TICK_MS: '100', QUIVER_ROLLOUT_MIN_SAMPLES: '10' };
    const { child, url } = await startServer(env);
    const calls: Call[] = [];
    let running = true;
    const loops: Array<Promise<void>> = [];
    try {
      const pluginId = (parseJsonText(await home.quiver(['plugin', 'show', 'calc', '--json']), 'plugin show') as { plugin: { id: string } }).plugin.id;
      const sessions = await openSessions(url, key, pluginId, canaries, others);
      sessions.forEach(({ client }, index) => {
        loops.push(
          (async () => {
            while (running) {
              const at = Date.now();
              const ok = await client.callTool({ name: 'calc__add', arguments: { a: 1, b: 2 } }).then((result) => (result as CallToolResult).isError !== true, () => false);
              if (running) calls.push({ at, ok, session: index });
              await new Promise((resolve) => setTimeout(resolve, 40));
            }
          })(),
        );
      });
      const between = (from: number, to: number) => calls.filter((call) => call.at >= from && call.at <= to);

      const healthyFrom = Date.now();
      await home.quiver(['plugin', 'upgrade', 'calc', '--ref', 'v2.0.0', '--json']);
      const promoted = await until(home, 'promoted', 120_000);
      const healthyCalls = between(healthyFrom, Date.now());

      const badFrom = Date.now();
      await home.quiver(['plugin', 'upgrade', 'calc', '--ref', 'v3.0.0', '--json']);
      const rolledBack = await until(home, 'rolled_back', 120_000);
      const rolledBackAt = new Date(rolledBack.rollout!.finishedAt!).getTime();
      const badCalls = between(badFrom, rolledBackAt);
      const firstFailure = badCalls.find((call) => !call.ok);
      const canaryCalls = badCalls.filter((call) => sessions[call.session]!.canary).length;
      running = false;
      await Promise.all(loops);
      await Promise.all(sessions.map(({ client }) => client.close().catch(() => undefined)));
      return {
        sessions: sessions.length,
        canarySessions: canaries,
        healthy: {
          calls: healthyCalls.length,
          failed: healthyCalls.filter((call) => !call.ok).length,
          promotedAfterMs: new Date(promoted.rollout!.finishedAt!).getTime() - healthyFrom,
        },
        bad: {
          calls: badCalls.length,
          failed: badCalls.filter((call) => !call.ok).length,
          canaryShare: badCalls.length === 0 ? 0 : canaryCalls / badCalls.length,
          failedShare: badCalls.length === 0 ? 0 : badCalls.filter((call) => !call.ok).length / badCalls.length,
          degradationToRollbackMs: firstFailure === undefined ? null : rolledBackAt - firstFailure.at,
          reason: rolledBack.rollout!.reason,
        },
        setup: `quiver serve (embedded store), ${sessions.length} MCP sessions over HTTP (${canaries} in the canary's 10 % bucket) calling every 40 ms; steps 10/50/100 % of 3 s, judged after 10 canary calls`,
      };
    } finally {
      running = false;
      await Promise.all(loops).catch(() => undefined);
      if (child.exitCode === null) {
        const closed = new Promise((resolve) => child.once('close', resolve));
        child.kill('SIGTERM');
        await closed;
      }
    }
  });
}
