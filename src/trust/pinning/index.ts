/**
 * @module trust/pinning
 * Tool pinning and rug-pull quarantine (issue #10): see service.ts for the flow, plan.ts for
 * the rule.
 */
export { createPinningService, quarantinedError, type PinningService, type PinningServiceOptions, type QuarantinedTool, type ApprovalResult } from './service.ts';
export { definitionHash, definitionOf, type ToolDefinition } from './definition.ts';
export { diffDefinitions, formatDiff, type PartDiff } from './diff.ts';
export type { PinPlan, ServedListing } from './plan.ts';
