/**
 * @module verification/stages/probe
 * The sandboxed probe run shared by the sandbox-execution and compatibility stages.
 */
export { createProbeRunner, type ProbeRunner, type ProbeRunnerOptions } from './runner.ts';
export { runProbe, type ProbeOptions } from './run-probe.ts';
export type * from './types.ts';
