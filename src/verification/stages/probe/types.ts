/**
 * @module verification/stages/probe/types
 * What one sandboxed probe run of a plugin observed (seed 000 §4.2 "Sandbox Execution" and
 * "Compatibility Testing"). The sandbox-execution and compatibility stages score the same run.
 */
import type { LaunchDescription } from '../../../runtime/sandbox.ts';

/**
 * Why a call was made: `valid`, a read (tool-safety.ts) with generated arguments (its failures
 * count against the plugin); `exercise`, any other tool with generated arguments (issue #23:
 * every tool runs in the throwaway sandbox, observed but not scored on its answer); `edge`, any
 * tool with edge values (long strings, paths out of its folder, loopback URLs, extreme
 * numbers); or one of the bad-argument checks of the compatibility stage.
 */
export type ProbeCallKind = 'valid' | 'exercise' | 'edge' | 'missing-required' | 'wrong-type';

/**
 * How a call ended: a clean result, a result with `isError`, a JSON-RPC error answer, no answer
 * within the call timeout, or the plugin process ended while the call was in flight.
 */
export type ProbeCallOutcome = 'result' | 'tool-error' | 'protocol-error' | 'timeout' | 'crash';

/** One tools/call made during the probe. */
export interface ProbeCall {
  tool: string;
  kind: ProbeCallKind;
  outcome: ProbeCallOutcome;
  latencyMs: number;
  /** JSON-RPC error code of a `protocol-error`. */
  errorCode?: number;
  /** Short message of an error (plugin text, cut to 300 characters). */
  message?: string;
  /** The `structuredContent` of a result, when it had one (for outputSchema checks). */
  structuredContent?: unknown;
}

/** A tool as tools/list served it during the probe. */
export interface ProbeTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** Resource use across every start of the plugin during the probe. */
export interface ProbeResources {
  /** Where the numbers come from: cgroup files, /proc samples, or nothing (no cgroups here). */
  source: 'cgroup' | 'none';
  /** Highest memory use of the plugin's cgroup, bytes. */
  peakMemoryBytes?: number;
  /** The memory limit the plugin ran under, bytes. */
  memoryLimitBytes?: number;
  /** CPU time (user + system) of the plugin's processes, ms. */
  cpuMs?: number;
  /** Processes the plugin started beyond its own launch chain (see resource-monitor.ts). */
  spawnedProcesses: number;
  /** Times the kernel's OOM killer fired. */
  oomKills: number;
}

/** Network attempts seen from inside the plugin's own network namespace (see network-monitor.ts). */
export interface ProbeNetwork {
  /** 'netns-counters': kernel counters of the sandbox's namespace; 'none': could not be read. */
  source: 'netns-counters' | 'none';
  /** Outgoing TCP connection attempts (SYN sent, loopback included). */
  tcpConnects: number;
  /** UDP datagrams sent (DNS lookups without a resolver end here: 127.0.0.1:53). */
  udpDatagrams: number;
  /** Packets dropped for want of a route (any host outside the sandbox: it has no network). */
  noRoute: number;
  /** Destinations the empty egress allow-list refused, by name (port 0: a DNS lookup); at most 50. */
  refused: Array<{ host: string; port: number }>;
}

/** Files the plugin changed in its own code folder (through the overlay; paths relative to it). */
export interface ProbeWrites {
  codeFolder: 'overlay' | 'read-only' | 'none';
  /** Files created or modified in the code folder. */
  written: string[];
  /** Files deleted from the code folder (overlay whiteouts). */
  deleted: string[];
  /** Files the plugin left in its state folder (allowed; counted for the report). */
  stateFiles: number;
}

/** One unexpected end of the plugin process. */
export interface ProbeCrash {
  reason: string;
  /** Tools whose calls were in flight. */
  during: string[];
}

/** Everything one probe run saw. */
export interface ProbeResult {
  /** False when the plugin never completed the MCP handshake. */
  started: boolean;
  /** A remote plugin, probed over HTTP: resources, network and writes were not observable. */
  remote?: boolean;
  /** Why it did not start (redacted, short). */
  startError?: string;
  /** What the server answered in `initialize`. */
  protocolVersion?: string;
  serverInfo?: { name: string; version: string };
  launch?: LaunchDescription;
  /** tools/list as served, every page followed. */
  listing: { tools: ProbeTool[]; pages: number; error?: string; duplicateNames: string[]; repeatedCursor: boolean };
  calls: ProbeCall[];
  /** Tools not called, with why (unsafe, no valid arguments…). */
  skipped: Array<{ tool: string; reason: string }>;
  crashes: ProbeCrash[];
  /** Times the plugin was started (1 + restarts after crashes). */
  starts: number;
  resources: ProbeResources;
  network: ProbeNetwork;
  writes: ProbeWrites;
  /** Time to the end of the handshake of the first start, ms. */
  startMs?: number;
  durationMs: number;
  warnings: string[];
}
