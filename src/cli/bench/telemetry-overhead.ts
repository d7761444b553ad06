/**
 * @module cli/bench/telemetry-overhead
 * What the always-on metrics add per request (issue #16), in-process and in isolation from the
 * machine's other work: one histogram observation; `selectTools` through `instrumentSelection`
 * against the same engine bare (an engine answering at once, so only the wrapper is timed);
 * and one MCP request/response through a transport wrapped by `observeMcpTransport` against
 * the same transport bare. Tracing is off (its cost then is one boolean test per span). Each
 * figure is the median of five rounds, in nanoseconds per operation.
 */
import { MetricsRegistry } from '../../telemetry/metrics/registry.ts';
import { declareQuiverMetrics } from '../../telemetry/quiver-metrics.ts';
import { instrumentSelection } from '../../telemetry/selection.ts';
import { observeMcpTransport } from '../../telemetry/mcp-transport.ts';
import type { SelectionEngine, SelectionResult } from '../../selection/index.ts';

const ROUNDS = 5;

function nsPerOperation(count: number, operation: () => void): number {
  for (let index = 0; index < 10_000; index++) operation();
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) operation();
  return Number(process.hrtime.bigint() - started) / count;
}

async function nsPerAsyncOperation(count: number, operation: () => Promise<unknown>): Promise<number> {
  for (let index = 0; index < 5_000; index++) await operation();
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) await operation();
  return Number(process.hrtime.bigint() - started) / count;
}

function median(values: number[]): number {
  return Math.round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
}

/** A transport that answers every request at once (the SDK's role, minus the SDK). */
function answeringTransport(): { onmessage?: (message: { id: number }) => void; send(message: unknown): Promise<void> } {
  const transport: { onmessage?: (message: { id: number }) => void; send(message: unknown): Promise<void> } = { send: async () => {} };
  transport.onmessage = (message) => void transport.send({ jsonrpc: '2.0', id: message.id, result: {} });
  return transport;
}

/** Runs the three comparisons. */
export async function benchTelemetryOverhead(): Promise<Record<string, unknown>> {
  const instruments = declareQuiverMetrics(new MetricsRegistry());
  const result = {
    tools: [],
    metadata: { stageTimingsMs: { policy: 0.01, candidates: 0.01, context: 0.01, retrieval: 0.05, bandit: 0.02, pins: 0, format: 0.01, total: 0.1 }, method: 'lexical', tokens: { sent: 0 } },
  } as unknown as SelectionResult;
  const engine = { selectTools: async () => result } as unknown as SelectionEngine;
  const instrumented = instrumentSelection(engine, instruments);
  const bare = answeringTransport();
  const observed = answeringTransport();
  observeMcpTransport(observed as never, { mcpRequests: instruments.mcpRequests, searches: instruments.searches, errors: instruments.errors, metaTools: new Set(['search_tools']), searchTool: 'search_tools' });
  const rounds = { observe: [] as number[], selectBare: [] as number[], selectInstrumented: [] as number[], requestBare: [] as number[], requestObserved: [] as number[] };
  let id = 0;
  const request = () => ({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'search_tools' } });
  for (let round = 0; round < ROUNDS; round++) {
    rounds.observe.push(nsPerOperation(1_000_000, () => instruments.toolCalls.observe({ plugin: 'github', outcome: 'success' }, 0.0123)));
    rounds.selectBare.push(await nsPerAsyncOperation(200_000, () => engine.selectTools({ query: 'x' })));
    rounds.selectInstrumented.push(await nsPerAsyncOperation(200_000, () => instrumented.selectTools({ query: 'x' })));
    rounds.requestBare.push(nsPerOperation(300_000, () => bare.onmessage!(request())));
    rounds.requestObserved.push(nsPerOperation(300_000, () => observed.onmessage!(request())));
  }
  const figures = Object.fromEntries(Object.entries(rounds).map(([name, values]) => [`${name}Ns`, median(values)])) as Record<string, number>;
  return {
    ...figures,
    selectionAddedNs: figures.selectInstrumentedNs! - figures.selectBareNs!,
    mcpRequestAddedNs: figures.requestObservedNs! - figures.requestBareNs!,
    setup: 'in-process, tracing off; a selection records 8 histogram observations (total + 7 stages), an MCP request 1–2',
  };
}
