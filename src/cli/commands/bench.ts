/**
 * @module cli/commands/bench
 * `quiver bench [--json] [--only a,b]`: runs the performance benchmarks of DESIGN.md §6 and
 * prints what it measured (one JSON object with --json). Each section runs independently;
 * a failing section is reported with its error, never replaced by a number.
 */
import { ErrorCodes, QuiverError, invalidInput } from '../../core/errors.ts';
import { printJson, type CommandSpec } from '../command.ts';

export const benchCommand: CommandSpec = {
  path: ['bench'],
  summary: 'Run the performance benchmarks (selection latency, sync, tokens, processes, overhead, start-up, memory).',
  usage: '[--only SECTION,…] [--json]',
  options: { only: { type: 'string', valueName: 'SECTION,…', description: 'run only these sections (comma-separated names)', defaultHelp: 'every section' } },
  storeless: true,
  async run(context) {
    // The benches (3.9k lines, MCP clients, pg) load when asked for, not with the command list,
    // and are not in the published package (package.json "files"): they run from a checkout (issue #28).
    const { benchSections } = await import('../bench/sections.ts').catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
      throw new QuiverError(ErrorCodes.unavailable, "the benchmarks are not part of the published package: run 'quiver bench' from a source checkout (git clone, npm install)", { cause: error });
    });
    const only = typeof context.args.values.only === 'string' ? context.args.values.only.split(',').map((s) => s.trim()) : undefined;
    const known = benchSections.map((s) => s.name);
    for (const name of only ?? []) {
      if (!known.includes(name)) throw invalidInput(`unknown bench section '${name}' (known: ${known.join(', ')})`);
    }
    const results: Record<string, unknown> = {
      machine: { cpus: (await import('node:os')).availableParallelism(), node: process.version, platform: process.platform },
    };
    let failed = 0;
    for (const section of benchSections) {
      if (only && !only.includes(section.name)) continue;
      if (!context.json) context.io.stderr(`bench: ${section.name}…\n`);
      const started = performance.now();
      try {
        results[section.name] = { target: section.target, measured: await section.run(), seconds: Math.round(performance.now() - started) / 1000 };
      } catch (error) {
        failed++;
        results[section.name] = { target: section.target, error: (error as Error).message };
      }
      if (!context.json) context.io.stderr(`bench: ${section.name} done in ${Math.round(performance.now() - started)} ms\n`);
    }
    if (context.json) printJson(context.io, results);
    else context.io.stdout(`${JSON.stringify(results, null, 2)}\n`);
    return failed === 0 ? 0 : 1;
  },
};
