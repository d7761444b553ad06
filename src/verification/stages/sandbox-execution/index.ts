/**
 * @module verification/stages/sandbox-execution
 * Stage 4 of seed 000 §4.2, "Sandbox Execution: run in isolated environment with behavioural
 * monitoring": the score of the shared probe run (../probe/), scale in `score.ts`.
 */
import type { Stage } from '../../types.ts';
import type { ProbeRunner } from '../probe/index.ts';
import { declaresNetwork } from '../static-analysis/index.ts';
import { scoreSandboxExecution } from './score.ts';

export { scoreSandboxExecution, sandboxMetrics } from './score.ts';

/** The sandbox-execution stage over `runner`'s probe (share the runner with the compatibility stage). */
export function createSandboxExecutionStage(runner: ProbeRunner): Stage {
  return async (context) => {
    context.progress('probing the plugin in the strictest sandbox');
    return scoreSandboxExecution(await runner.probe(context), { networkDeclared: declaresNetwork(context.subject) });
  };
}
