/**
 * @module verification/stages/compatibility
 * Stage 6 of seed 000 §4.2, "Compatibility Testing: API contract verification, version
 * compatibility": protocol version, pagination, clean errors on bad arguments, outputs against
 * `outputSchema`, provider conversions — from the shared probe run (../probe/); scale in `score.ts`.
 */
import type { Stage } from '../../types.ts';
import type { ProbeRunner } from '../probe/index.ts';
import { createSchemaCompiler } from '../probe/json-schema.ts';
import { scoreCompatibility } from './score.ts';

export { scoreCompatibility } from './score.ts';
export { checkProviderFormats, geminiSchemaProblem, type ProviderProblem } from './provider-checks.ts';

/** The compatibility stage over `runner`'s probe (share the runner with the sandbox-execution stage). */
export function createCompatibilityStage(runner: ProbeRunner): Stage {
  return async (context) => {
    context.progress('checking protocol, pagination, errors, output schemas and provider formats');
    const probe = await runner.probe(context);
    return scoreCompatibility({ pluginName: context.subject.pluginName, discovered: context.subject.tools, probe, compile: createSchemaCompiler() });
  };
}
