/**
 * @module test/runtime/helpers
 * Specs for the fixture servers in test/fixtures/plugins, and /proc checks for leftovers.
 */
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../src/core/logger.ts';
import { processesWithEnv } from '../../src/runtime/process-tree.ts';
import { supervisorMarkerName } from '../../src/runtime/sandbox-identity.ts';
import type { TrustLevel, UpstreamSpecInput } from '../../src/runtime/types.ts';

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const fixturesDir = join(repositoryRoot, 'test/fixtures/plugins');
export const behaviourServer = join(fixturesDir, 'behaviour-server.mjs');
export const paginatedServer = join(fixturesDir, 'paginated-server.mjs');

/** A stdio spec for a fixture server. */
export function fixtureSpec(
  pluginId: string,
  overrides: Partial<Record<string, unknown>> & { trustLevel?: TrustLevel; env?: Record<string, string>; execution?: Record<string, unknown>; script?: string } = {},
): UpstreamSpecInput {
  const { script, ...rest } = overrides;
  return {
    pluginId,
    pluginName: pluginId,
    version: '1.0.0',
    trustLevel: 'OFFICIAL',
    transport: 'stdio',
    command: process.execPath,
    args: [script ?? behaviourServer],
    cwd: fixturesDir,
    readOnlyPaths: [join(repositoryRoot, 'node_modules')],
    ...rest,
  } as UpstreamSpecInput;
}

/** Processes still alive that a supervisor with this id started (including re-parented orphans). */
export function leftovers(supervisorId: string): number[] {
  return processesWithEnv(supervisorMarkerName, supervisorId);
}

/** A clock that can jump ahead while real timers keep running. */
export function createTestClock(): { now(): number; advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms) {
      offset += ms;
    },
  };
}

/** A logger capturing every line as JSON text (to prove secrets never reach it). */
export function createCapturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (context: object, message?: string) => {
    lines.push(JSON.stringify({ level, message, ...context }));
  };
  const logger = { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: () => logger };
  return logger;
}

/** Text of the first content item of a tool result. */
export function firstText(result: { content?: unknown }): string {
  const content = result.content as Array<{ type: string; text?: string }> | undefined;
  return content?.[0]?.text ?? '';
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
