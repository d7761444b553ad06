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

/** The implemented stages, by name. */
export const stageRegistry: Partial<Record<StageName, Stage>> = {
  source: sourceStage,
  schemaValidation: schemaValidationStage,
  staticAnalysis: staticAnalysisStage,
  securityScan: securityScanStage,
};
