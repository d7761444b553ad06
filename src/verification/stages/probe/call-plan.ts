/**
 * @module verification/stages/probe/call-plan
 * Which calls the probe makes (issues #10, #23): every tool once, with generated arguments
 * that must pass the tool's own input schema (reads by the safety rule of tool-safety.ts are
 * `valid` and scored on their answers, the others `exercise`, observed only), one call of edge
 * values per tool; and, for the compatibility stage, the bad-argument calls — missing required
 * properties and wrong types — on up to two tools that require something. Bad calls prefer
 * safe tools; when no safe tool requires anything they fall back to tools not annotated
 * destructive: a well-behaved server rejects them before acting, and the sandbox (no
 * network, throwaway state folder) contains one that does not.
 */
import { badArguments, edgeArguments, generateArguments, requiredProperties } from './argument-generator.ts';
import type { SchemaCompiler } from './json-schema.ts';
import { toolSafety } from './tool-safety.ts';
import type { ProbeCallKind, ProbeTool } from './types.ts';

/** One call to make. */
export interface PlannedCall {
  tool: string;
  kind: ProbeCallKind;
  arguments: Record<string, unknown>;
}

/** The calls, and the tools left out with why. */
export interface CallPlan {
  calls: PlannedCall[];
  skipped: Array<{ tool: string; reason: string }>;
}

/**
 * Plans the probe's calls for `tools`: every tool once with generated arguments (`valid` for
 * reads, `exercise` for the rest: the throwaway sandbox contains what a write does), at most
 * `maxValidCalls` of them; then one `edge` call per tool that takes properties (issue #23);
 * then the bad-argument calls. Without `contained` (a remote or OpenAPI plugin: the calls reach
 * a real service, no throwaway sandbox holds what they do) only read tools are called, with no
 * edge values, and the bad-argument calls go to reads only.
 */
export function planCalls(tools: readonly ProbeTool[], compile: SchemaCompiler, maxValidCalls: number, contained = true): CallPlan {
  const calls: PlannedCall[] = [];
  const edges: PlannedCall[] = [];
  const skipped: CallPlan['skipped'] = [];
  const safeTools: ProbeTool[] = [];
  // Reads first, so the budget drops writes before reads when there are many tools.
  const ordered = [...tools].sort((a, b) => Number(toolSafety(b).safe) - Number(toolSafety(a).safe));
  for (const tool of ordered) {
    const safe = toolSafety(tool).safe;
    if (safe) safeTools.push(tool);
    if (!safe && !contained) {
      skipped.push({ tool: tool.name, reason: 'not a read, and the plugin runs outside a throwaway sandbox: calling it would act on the real service' });
      continue;
    }
    if (calls.length >= maxValidCalls) {
      skipped.push({ tool: tool.name, reason: `more than ${maxValidCalls} tools` });
      continue;
    }
    const edge = edgeArguments(tool.inputSchema);
    if (edge !== undefined && contained) edges.push({ tool: tool.name, kind: 'edge', arguments: edge });
    const args = generateArguments(tool.inputSchema);
    const compiled = compile(tool.inputSchema);
    const problem = compiled.ok ? compiled.validate(args) : `input schema does not compile: ${compiled.error}`;
    if (problem !== undefined) {
      skipped.push({ tool: tool.name, reason: `no valid arguments could be generated (${problem})` });
      continue;
    }
    calls.push({ tool: tool.name, kind: safe ? 'valid' : 'exercise', arguments: args });
  }
  calls.push(...edges);
  const requiring = (candidates: readonly ProbeTool[]) => candidates.filter((tool) => requiredProperties(tool.inputSchema).length > 0);
  const fallback = tools.filter((tool) => tool.annotations?.destructiveHint !== true);
  const targets = (requiring(safeTools).length > 0 || !contained ? requiring(safeTools) : requiring(fallback)).slice(0, 2);
  for (const tool of targets) {
    for (const kind of ['missing-required', 'wrong-type'] as const) {
      const args = badArguments(tool.inputSchema, kind);
      if (args !== undefined) calls.push({ tool: tool.name, kind, arguments: args });
    }
  }
  return { calls, skipped };
}
