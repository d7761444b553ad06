/**
 * @module verification/stages/compatibility/score
 * The compatibility score (seed 000 §4.2 stage 6, "API contract verification, version
 * compatibility") from the shared probe run. Start at 100 and deduct:
 *
 * | finding                                                        | code                              | deduction       |
 * |----------------------------------------------------------------|-----------------------------------|-----------------|
 * | no MCP handshake                                               | `compat_handshake_failed`         | score 0         |
 * | answered an older protocol version than Quiver's SDK's latest  | `compat_older_protocol`           | 5               |
 * | tools/list failed (a page errored)                             | `compat_list_failed`              | 30              |
 * | a `nextCursor` repeated (pagination loops)                     | `compat_pagination_loop`          | 15              |
 * | the same tool name listed twice                                | `compat_duplicate_tools`          | 10              |
 * | tools listed now differ from those discovered at install       | `compat_tools_changed`            | 5               |
 * | bad arguments: crash / no answer / accepted silently           | `compat_bad_args_crash` / `_hang` / `_accepted` | 25 / 15 / 5 each, ≤ 40 |
 * | an `outputSchema` that does not compile                        | `compat_output_schema_invalid`    | 10 each         |
 * | a result without `structuredContent` or not matching `outputSchema` | `compat_output_mismatch`     | 10 each         |
 * | a tool a provider would refuse after conversion                | `compat_provider_invalid`         | 10 each         |
 * | a lossy Gemini conversion                                      | `compat_provider_lossy`           | 2 each          |
 * (output checks ≤ 30 together, provider checks ≤ 30 together). A renamed tool is `info`.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { StageIssue, StageResult, SubjectTool } from '../../types.ts';
import type { SchemaCompiler } from '../probe/json-schema.ts';
import type { ProbeResult } from '../probe/types.ts';
import { checkProviderFormats } from './provider-checks.ts';
import { MODERN_PROTOCOL_VERSION } from '../../../runtime/era-probe.ts';

/** The revisions Quiver speaks to plugins: the latest of the 2025 handshake era, and the stateless 2026-07-28. */
const CURRENT_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION];

type Finding = { deduct: number; issue: StageIssue };

function listingFindings(probe: ProbeResult, discovered: readonly SubjectTool[]): Finding[] {
  const findings: Finding[] = [];
  // Issue #24: Quiver speaks both current revisions (the 2025 handshake and the 2026-07-28 era); either is up to date.
  if (probe.protocolVersion !== undefined && !CURRENT_PROTOCOL_VERSIONS.includes(probe.protocolVersion)) {
    findings.push({ deduct: 5, issue: { severity: 'low', code: 'compat_older_protocol', message: `the server answered protocol ${probe.protocolVersion}; Quiver speaks ${CURRENT_PROTOCOL_VERSIONS.join(' and ')}` } });
  }
  const { listing } = probe;
  if (listing.error !== undefined) findings.push({ deduct: 30, issue: { severity: 'high', code: 'compat_list_failed', message: `tools/list failed after ${listing.pages} page(s): ${listing.error}` } });
  if (listing.repeatedCursor) findings.push({ deduct: 15, issue: { severity: 'medium', code: 'compat_pagination_loop', message: 'tools/list returned a nextCursor it had already returned' } });
  if (listing.duplicateNames.length > 0) {
    findings.push({ deduct: 10, issue: { severity: 'medium', code: 'compat_duplicate_tools', message: `tools listed twice: ${listing.duplicateNames.join(', ')}`, location: listing.duplicateNames.map((name) => `tool:${name}`).join(',') } });
  }
  const now = new Set(listing.tools.map((tool) => tool.name));
  const before = new Set(discovered.map((tool) => tool.name));
  const changed = [...now].filter((name) => !before.has(name)).concat([...before].filter((name) => !now.has(name)));
  if (discovered.length > 0 && listing.error === undefined && changed.length > 0) {
    findings.push({ deduct: 5, issue: { severity: 'low', code: 'compat_tools_changed', message: `the tools listed in the sandbox differ from those discovered at install: ${changed.slice(0, 10).join(', ')}` } });
  }
  return findings;
}

function badArgumentFindings(probe: ProbeResult): Finding[] {
  const findings: Finding[] = [];
  const rules = { crash: [25, 'high', 'compat_bad_args_crash', 'crashed'], timeout: [15, 'medium', 'compat_bad_args_hang', 'gave no answer'], result: [5, 'low', 'compat_bad_args_accepted', 'returned a normal result'] } as const;
  for (const call of probe.calls) {
    if ((call.kind !== 'missing-required' && call.kind !== 'wrong-type') || call.outcome === 'tool-error' || call.outcome === 'protocol-error') continue;
    const [deduct, severity, code, what] = rules[call.outcome];
    findings.push({ deduct, issue: { severity, code, message: `a call with ${call.kind === 'missing-required' ? 'required arguments missing' : 'arguments of the wrong type'} ${what} instead of an error`, location: `tool:${call.tool}` } });
  }
  return capped(findings, 40);
}

/** Scales the deductions of `findings` down so that together they take at most `limit`. */
function capped(findings: Finding[], limit: number): Finding[] {
  const total = findings.reduce((sum, finding) => sum + finding.deduct, 0);
  if (total > limit) findings.forEach((finding) => (finding.deduct = (finding.deduct * limit) / total));
  return findings;
}

function outputFindings(probe: ProbeResult, compile: SchemaCompiler): Finding[] {
  const findings: Finding[] = [];
  for (const tool of probe.listing.tools) {
    if (tool.outputSchema === undefined) continue;
    const compiled = compile(tool.outputSchema);
    if (!compiled.ok) {
      findings.push({ deduct: 10, issue: { severity: 'medium', code: 'compat_output_schema_invalid', message: `the outputSchema does not compile: ${compiled.error}`, location: `tool:${tool.name}` } });
      continue;
    }
    for (const call of probe.calls.filter((candidate) => candidate.tool === tool.name && candidate.kind === 'valid' && candidate.outcome === 'result')) {
      const problem = call.structuredContent === undefined ? 'no structuredContent although the tool declares an outputSchema' : compiled.validate(call.structuredContent);
      if (problem !== undefined) findings.push({ deduct: 10, issue: { severity: 'medium', code: 'compat_output_mismatch', message: `the result does not match the outputSchema: ${problem}`, location: `tool:${tool.name}` } });
    }
  }
  return capped(findings, 30);
}

function providerFindings(pluginName: string, probe: ProbeResult, compile: SchemaCompiler): Finding[] {
  const findings: Finding[] = [];
  for (const problem of checkProviderFormats(pluginName, probe.listing.tools, compile)) {
    const location = `tool:${problem.tool}`;
    if (problem.kind === 'invalid') findings.push({ deduct: 10, issue: { severity: 'medium', code: 'compat_provider_invalid', message: `${problem.provider}: ${problem.message}`, location } });
    else if (problem.kind === 'lossy') findings.push({ deduct: 2, issue: { severity: 'low', code: 'compat_provider_lossy', message: `${problem.provider}: ${problem.message}`, location } });
    else findings.push({ deduct: 0, issue: { severity: 'info', code: 'compat_provider_renamed', message: `${problem.provider}: ${problem.message}`, location } });
  }
  return capped(findings, 30);
}

/** Scores one probe run for the compatibility stage. */
export function scoreCompatibility(input: { pluginName: string; discovered: readonly SubjectTool[]; probe: ProbeResult; compile: SchemaCompiler }): StageResult {
  const { probe } = input;
  const metrics = {
    protocolVersion: probe.protocolVersion ?? null,
    latestProtocolVersion: MODERN_PROTOCOL_VERSION,
    serverInfo: probe.serverInfo ?? null,
    listPages: probe.listing.pages,
    toolsListed: probe.listing.tools.length,
    badArgumentCalls: probe.calls.filter((call) => call.kind === 'missing-required' || call.kind === 'wrong-type').length,
    toolsWithOutputSchema: probe.listing.tools.filter((tool) => tool.outputSchema !== undefined).length,
  };
  if (!probe.started) {
    return { score: 0, issues: [{ severity: 'critical', code: 'compat_handshake_failed', message: `no MCP handshake: ${probe.startError ?? 'unknown reason'}` }], metrics };
  }
  const findings = [...listingFindings(probe, input.discovered), ...badArgumentFindings(probe), ...outputFindings(probe, input.compile), ...providerFindings(input.pluginName, probe, input.compile)];
  const issues = findings.map((finding) => finding.issue);
  if (metrics.badArgumentCalls === 0) issues.push({ severity: 'info', code: 'compat_bad_args_not_tested', message: 'no tool requires an argument, so no bad-argument call could be made' });
  const score = Math.max(0, Math.min(100, Math.round(100 - findings.reduce((sum, finding) => sum + finding.deduct, 0))));
  return { score, issues, metrics };
}
