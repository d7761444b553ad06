/**
 * @module cli/bench/startup
 * Time from spawning `quiver serve` on the embedded default until `/healthz` answers:
 * once on a new data folder (creates and migrates it) and then on the existing folder.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/quiver.mjs', import.meta.url));

async function timeToReady(dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--data', dataDir, '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, QUIVER_LOG_LEVEL: 'silent' },
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.once('close', (code) => reject(new Error(`quiver serve exited with ${code}`)));
    });
    for (;;) {
      const response = await fetch(`${url}/healthz`).catch(() => undefined);
      if (response?.ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    return performance.now() - started;
  } finally {
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await closed;
  }
}

/** Measures cold (new folder) and warm (existing folder) start-up of `quiver serve`. */
export async function benchServeStartup(): Promise<{ firstStartMs: number; restartMs: number; target: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-bench-start-'));
  try {
    const firstStartMs = await timeToReady(dir);
    const restartMs = await timeToReady(dir);
    return { firstStartMs: Math.round(firstStartMs), restartMs: Math.round(restartMs), target: 'ready ≤ 3000 ms' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
