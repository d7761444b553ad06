/**
 * @module cli/bench/idle-probe
 * The machine's own noise beside a latency figure: a separate Node process that does nothing
 * but measure how late its event loop wakes up (`monitorEventLoopDelay`, 1 ms resolution)
 * while a bench runs. On a quiet machine its p99 stays near 1 ms; when other processes hold
 * the cores it rises, and a server's p99 measured at that moment includes the same waits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { parseJsonText } from '../../core/validation.ts';

/** Event-loop delay of the idle process while it ran (milliseconds). */
export interface IdleProbeResult {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** A running probe: `stop()` ends it and returns what it measured. */
export interface IdleProbe {
  stop(): Promise<IdleProbeResult>;
}

// Runs in the child: the histogram starts when the parent says so (a line on stdin), and its
// percentiles go to stdout when stdin ends. The child loads nothing else.
const PROBE_SOURCE = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 1 });
const ms = (ns) => Math.round(ns / 1e3) / 1e3;
process.stdin.once('data', () => h.enable());
process.stdin.on('end', () => {
  h.disable();
  process.stdout.write(JSON.stringify({ p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) }));
});
process.stdout.write('ready\\n');
`;

/** Starts the idle process and begins measuring once it is up. */
export async function startIdleProbe(): Promise<IdleProbe> {
  const child: ChildProcess = spawn(process.execPath, ['-e', PROBE_SOURCE], { stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: string) => {
      out += chunk;
      if (!out.startsWith('ready\n')) return;
      child.stdout!.off('data', onData);
      out = out.slice('ready\n'.length);
      resolve();
    };
    child.stdout!.on('data', onData);
    child.once('error', reject);
  });
  child.stdout!.on('data', (chunk: string) => (out += chunk));
  child.stdin!.write('start\n');
  return {
    async stop() {
      const closed = once(child, 'close');
      child.stdin!.end();
      await closed;
      return parseJsonText(out, 'idle probe') as IdleProbeResult;
    },
  };
}
