/**
 * @module verification/stages
 * The one registry of the stages this hub runs (seed 000 §4.2). A stage that is not listed
 * here is recorded `not_run` with score 0 by the pipeline: nothing is faked.
 */
import type { Stage, StageName } from '../types.ts';
import { sourceStage } from './source/index.ts';
import { schemaValidationStage } from './schema-validation/index.ts';
import { staticAnalysisStage } from './static-analysis/index.ts';
import { securityScanStage } from './security-scan/index.ts';
import { createProbeRunner } from './probe/index.ts';
import { createSandboxExecutionStage } from './sandbox-execution/index.ts';
import { createCompatibilityStage } from './compatibility/index.ts';

/** One sandboxed probe run per verification subject, read by both stages that need the plugin running. */
const probeRunner = createProbeRunner();

/** The implemented stages, by name. */
export const stageRegistry: Partial<Record<StageName, Stage>> = {
  source: sourceStage,
  schemaValidation: schemaValidationStage,
  staticAnalysis: staticAnalysisStage,
  securityScan: securityScanStage,
  sandboxExecution: createSandboxExecutionStage(probeRunner),
  compatibility: createCompatibilityStage(probeRunner),
};
