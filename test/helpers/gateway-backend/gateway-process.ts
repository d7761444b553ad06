/**
 * @module test/helpers/gateway-backend/gateway-process
 * Runs the gateway over stdio on THE TEST BACKEND as its own process, for end-to-end tests,
 * third-party clients (MCP Inspector) and the overhead benchmark:
 *
 *   node --import tsx test/helpers/gateway-backend/gateway-process.ts --config CONFIG.json [--org X --role R --exposure all …]
 *
 * CONFIG.json: `{plugins: LocalPluginSpec[], marketplace?: [...], gateway?: GatewayOptions}`.
 * stdout carries MCP only; warnings go to stderr as JSON lines. Exits when the client leaves.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createGateway, type GatewayOptions } from '../../../src/gateway/gateway.ts';
import { createLocalTestBackend, type LocalPluginSpec } from './local-backend.ts';
import { MCP_STDIO_OPTIONS, identityFromFlags } from '../../../src/gateway/identity.ts';
import { runStdioGateway } from '../../../src/gateway/stdio.ts';
import type { MarketplaceSuggestion } from '../../../src/gateway/backend.ts';

/** Runs until the stdio client disconnects or a signal arrives. */
export async function runGatewayProcess(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { ...MCP_STDIO_OPTIONS, config: { type: 'string' } } });
  if (typeof values.config !== 'string') throw new Error('gateway-process: pass --config FILE');
  const config = JSON.parse(readFileSync(values.config, 'utf8')) as { plugins: LocalPluginSpec[]; marketplace?: MarketplaceSuggestion[]; gateway?: GatewayOptions };
  const backend = await createLocalTestBackend({ plugins: config.plugins, ...(config.marketplace ? { marketplace: config.marketplace } : {}) });
  for (const warning of backend.warnings) process.stderr.write(`${JSON.stringify({ warning })}\n`);
  const gateway = createGateway({ backend, ...(config.gateway ? { options: config.gateway } : {}) });
  const running = await runStdioGateway({ gateway, identity: identityFromFlags(values) });
  const stop = async () => {
    await gateway.close();
    await backend.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  await running.closed;
  await stop();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runGatewayProcess(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    process.exit(1);
  });
}
