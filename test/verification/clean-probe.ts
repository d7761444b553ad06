/**
 * @module test/verification/clean-probe
 * A clean probe result for the stages' unit tests, to change one field at a time.
 */
import type { ProbeResult } from '../../src/verification/stages/probe/types.ts';

/** A plugin that started, listed two tools on one page and answered every call cleanly. */
export function cleanProbe(overrides: Partial<ProbeResult> = {}): ProbeResult {
  return {
    started: true,
    protocolVersion: '2025-11-25',
    serverInfo: { name: 'fixture', version: '1.0.0' },
    listing: {
      tools: [
        { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, annotations: { readOnlyHint: true } },
        { name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] } },
      ],
      pages: 1,
      duplicateNames: [],
      repeatedCursor: false,
    },
    calls: [
      { tool: 'echo', kind: 'valid', outcome: 'result', latencyMs: 3 },
      { tool: 'get_weather', kind: 'valid', outcome: 'result', latencyMs: 5, structuredContent: { celsius: 20 } },
      { tool: 'echo', kind: 'missing-required', outcome: 'tool-error', latencyMs: 1 },
      { tool: 'echo', kind: 'wrong-type', outcome: 'protocol-error', errorCode: -32602, latencyMs: 1 },
    ],
    skipped: [],
    crashes: [],
    starts: 1,
    resources: { source: 'cgroup', peakMemoryBytes: 40 << 20, memoryLimitBytes: 512 << 20, cpuMs: 200, spawnedProcesses: 0, oomKills: 0 },
    network: { source: 'netns-counters', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [] },
    writes: { codeFolder: 'overlay', written: [], deleted: [], stateFiles: 1 },
    startMs: 300,
    durationMs: 1_000,
    warnings: [],
    ...overrides,
  };
}
