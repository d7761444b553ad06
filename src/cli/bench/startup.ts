/**
 * @module cli/bench/startup
 * Start-up of real `quiver` processes against the targets of issue #28, each printed beside
 * its figure (min / median / max over several runs; wall time is the machine's, CPU time the
 * process's own):
 * - `quiver serve` on the embedded default, spawn to the first 200 of `/readyz`: once on
 *   a new data folder (created from the template and migrated), then on that warm folder;
 * - `quiver --help`;
 * - a CLI command forwarded to a running server (`quiver plugin list --json`): wall, CPU, peak RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runQuiver, spread, startServeProcess } from './serve-process.ts';

export const STARTUP_TARGETS = {
  serveReadyWarmMs: 1000,
  helpMs: 300,
  forwardedMs: 300,
  forwardedRssMb: 80,
} as const;

/** What the start-up bench measured. */
export interface StartupBench {
  serve: {
    target: string;
    firstStartMs: number;
    warmReadyMs: ReturnType<typeof spread>;
    warmCpuToReadyMs: ReturnType<typeof spread> | undefined;
  };
  help: { target: string; wallMs: ReturnType<typeof spread>; cpuMs: ReturnType<typeof spread>; maxRssMb: ReturnType<typeof spread> };
  forwarded: { target: string; command: string; wallMs: ReturnType<typeof spread>; cpuMs: ReturnType<typeof spread>; maxRssMb: ReturnType<typeof spread> };
}

/** Measures `quiver serve` ready (new, then `runs` warm starts), `quiver --help` and a forwarded command, `runs` times each. */
export async function benchServeStartup(runs = 5): Promise<StartupBench> {
  const folder = mkdtempSync(join(tmpdir(), 'quiver-bench-start-'));
  const home = join(folder, 'home');
  const data = join(folder, 'data');
  try {
    const first = await startServeProcess(data, home);
    await first.stop();
    const ready: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const serve = await startServeProcess(data, home);
      ready.push(serve.readyMs);
      if (serve.cpuToReadyMs !== undefined) cpu.push(serve.cpuToReadyMs);
      await serve.stop();
    }

    const help = [];
    await runQuiver(['--help'], { QUIVER_HOME: home }); // warm-up (file cache)
    for (let i = 0; i < runs; i++) help.push(await runQuiver(['--help'], { QUIVER_HOME: home }));

    const forwardedArgs = ['plugin', 'list', '--json', '--data', data];
    const forwarded = [];
    const server = await startServeProcess(data, home);
    try {
      await runQuiver(forwardedArgs, { QUIVER_HOME: home });
      for (let i = 0; i < runs; i++) {
        const run = await runQuiver(forwardedArgs, { QUIVER_HOME: home });
        if (run.exitCode !== 0) throw new Error(`quiver ${forwardedArgs.join(' ')} exited with ${run.exitCode}`);
        forwarded.push(run);
      }
    } finally {
      await server.stop();
    }
    return {
      serve: {
        target: `warm data folder: ready ≤ ${STARTUP_TARGETS.serveReadyWarmMs} ms (issue #28)`,
        firstStartMs: Math.round(first.readyMs),
        warmReadyMs: spread(ready),
        warmCpuToReadyMs: cpu.length > 0 ? spread(cpu) : undefined,
      },
      help: {
        target: `≤ ${STARTUP_TARGETS.helpMs} ms (issue #28)`,
        wallMs: spread(help.map((r) => r.wallMs)),
        cpuMs: spread(help.map((r) => r.cpuMs)),
        maxRssMb: spread(help.map((r) => r.maxRssMb), 1),
      },
      forwarded: {
        target: `≤ ${STARTUP_TARGETS.forwardedMs} ms and ≤ ${STARTUP_TARGETS.forwardedRssMb} MB RSS (issue #28)`,
        command: `quiver ${forwardedArgs.slice(0, 3).join(' ')}`,
        wallMs: spread(forwarded.map((r) => r.wallMs)),
        cpuMs: spread(forwarded.map((r) => r.cpuMs)),
        maxRssMb: spread(forwarded.map((r) => r.maxRssMb), 1),
      },
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
