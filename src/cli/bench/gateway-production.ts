/**
 * @module cli/bench/gateway-production
 * `tools/call` overhead of the production gateway (DESIGN §6: ≤ 1 ms at p50): an MCP client
 * talking to `quiver serve --stdio` (production backend: selection visibility, plugin launch
 * spec, supervisor, bubblewrap sandbox) in front of a real npm MCP server, against the same
 * client talking to that server directly from its installed folder. Calls are interleaved.
 * Needs the npm registry once to install the server.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parseJsonText } from '../../core/validation.ts';
import { compareCallPaths, type GatewayOverheadResult } from './gateway-overhead.ts';

const BIN = fileURLToPath(new URL('../../../bin/quiver.mjs', import.meta.url));

function quiver(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`quiver ${args[0]} ${args[1] ?? ''} failed (${code}): ${err.slice(-400)}`))));
  });
}

/** Measured overhead of the production gateway over a direct client. */
export interface ProductionGatewayOverhead extends GatewayOverheadResult {
  server: string;
}

/** Installs server-everything into a throwaway home and measures both paths. */
export async function benchProductionGatewayOverhead(options: { iterations?: number; warmup?: number } = {}): Promise<ProductionGatewayOverhead> {
  const iterations = options.iterations ?? 300;
  const warmup = options.warmup ?? 30;
  const home = mkdtempSync(join(tmpdir(), 'quiver-bench-gateway-'));
  chmodSync(home, 0o755); // the sandbox user must reach the installed package
  // Measured alone: no background verification (issue #10) of the installed plugins running beside it.
  const env = { ...(process.env as Record<string, string>), QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' };
  const clients: Client[] = [];
  try {
    await quiver(['plugin', 'add', 'npm:@modelcontextprotocol/server-everything', '--name', 'everything', '--json'], env);
    const shown = parseJsonText(await quiver(['plugin', 'show', 'everything', '--json'], env), 'plugin show') as {
      plugin: { version: string; launch: { command: string; args: string[]; cwd: string }; source: { cachePath: string } };
    };
    const { launch, source } = shown.plugin;

    const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: launch.args, cwd: join(source.cachePath, launch.cwd), stderr: 'ignore' }));
    clients.push(direct);
    const gateway = new Client({ name: 'bench-gateway', version: '1.0.0' });
    await gateway.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--stdio', '--exposure', 'all'], env, stderr: 'ignore' }));
    clients.push(gateway);

    const call = (client: Client, name: string) => async () => {
      const result = await client.callTool({ name, arguments: { message: 'bench' } });
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    };
    const measured = await compareCallPaths(call(direct, 'echo'), call(gateway, 'everything__echo'), {
      iterations,
      warmup,
      setup: 'SDK client -> stdio -> quiver serve --stdio (production backend, plugin sandboxed by bubblewrap) -> server-everything; vs SDK client -> stdio -> server-everything',
    });
    return { server: `@modelcontextprotocol/server-everything ${shown.plugin.version}`, ...measured };
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    rmSync(home, { recursive: true, force: true });
  }
}
