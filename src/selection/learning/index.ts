/**
 * @module selection/learning
 * Learned example queries (issue #13, DESIGN §3.10): capture from outcomes, redaction, caps,
 * per-organisation ranking overlays, admin operations.
 */
export { createLearning } from './learning.ts';
export type { Learning, LearningOptions, LearningStats, AnalysedQuery } from './learning.ts';
export { withLearnedExamples } from './retrieval.ts';
export { redact, textKey } from './redact.ts';
export { defaultLearningSettings, perContributorCap, orgScopeOf } from './settings.ts';
export type { LearningSettings } from './settings.ts';
export { contributorOf } from './capture.ts';
export type { QuarantineCheck, SkipReason } from './capture.ts';
