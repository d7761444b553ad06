/**
 * @module cli/commands/embeddings
 * `quiver embeddings status|recompute` (issue #15): what the background embedding worker has
 * done, and a run on demand. While `quiver serve` owns the embedded folder these run inside the
 * server, so `status` shows the live worker there.
 */
import { formatTable, printJson, type CommandSpec } from '../command.ts';
import type { EmbeddingRunReport } from '../../retrieval/embedding-worker.ts';

function describeRun(run: EmbeddingRunReport): string {
  const parts = [`embedded ${run.embedded}`, `${run.durationMs} ms`];
  if (run.changedMeanwhile > 0) parts.push(`${run.changedMeanwhile} changed meanwhile (left stale)`);
  return parts.join(', ');
}

const status: CommandSpec = {
  path: ['embeddings', 'status'],
  summary: 'Show the embedder, how many tools are pending, stale or current, and the last background run.',
  usage: '',
  async run(context) {
    const app = await context.openApp();
    const report = await app.embeddings.status();
    if (context.json) {
      printJson(context.io, report);
      return 0;
    }
    const rows = Object.entries(report.tools).map(([state, count]) => [state, count]);
    const lines = [
      `embedder ${report.model} (${report.dimensions} dimensions)${report.running ? ', running now' : report.queued ? ', run queued' : ''}`,
      ...(report.fallback ? [`warning: ${report.fallback.warning}`] : []),
      rows.length > 0 ? formatTable(['STATE', 'TOOLS'], rows).trimEnd() : 'no tools in the catalog yet: install a plugin with `quiver plugin add SOURCE`',
      report.lastRun
        ? `last run ${report.lastRun.finishedAt}: ${describeRun(report.lastRun)}${report.lastRun.warnings.map((w) => `\nwarning: ${w}`).join('')}`
        : 'no run in this process yet',
    ];
    context.io.stdout(`${lines.join('\n')}\n`);
    return 0;
  },
};

const recompute: CommandSpec = {
  path: ['embeddings', 'recompute'],
  summary: 'Embed the tools whose embedding is pending or stale now (--all: every tool, e.g. after switching embedders).',
  usage: '[--all]',
  options: { all: { type: 'boolean', default: false, description: 're-embed every live tool, not only pending and stale ones' } },
  async run(context) {
    const app = await context.openApp();
    const report = await app.embeddings.runNow({ all: context.args.values.all === true });
    if (context.json) printJson(context.io, { model: app.embedder.modelId, ...report });
    else context.io.stdout(`${app.embedder.modelId}: ${describeRun(report)}${report.warnings.map((w) => `\nwarning: ${w}`).join('')}\n`);
    return report.warnings.length > 0 && report.embedded === 0 ? 1 : 0;
  },
};

/** `quiver embeddings …`. */
export const embeddingsCommands: CommandSpec[] = [status, recompute];
