import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSchemaCompiler } from '../probe/json-schema.ts';
import { cleanProbe } from '../../../../test/verification/clean-probe.ts';
import type { ProbeResult } from '../probe/types.ts';
import { checkProviderFormats, geminiSchemaProblem } from './provider-checks.ts';
import { scoreCompatibility } from './score.ts';

const compile = createSchemaCompiler();
const score = (probe: ProbeResult, discovered = probe.listing.tools) => scoreCompatibility({ pluginName: 'fixture', discovered, probe, compile });
const codes = (probe: ProbeResult, discovered?: ProbeResult['listing']['tools']) => score(probe, discovered).issues.map((issue) => issue.code);

describe('compatibility score', () => {
  it('gives a clean run 100 and reports the protocol and pages', () => {
    const result = score(cleanProbe());
    assert.equal(result.score, 100);
    assert.deepEqual(result.issues, []);
    assert.equal(result.metrics?.protocolVersion, '2025-11-25');
    assert.equal(result.metrics?.badArgumentCalls, 2);
  });

  it('gives 0 without a handshake', () => {
    const result = score(cleanProbe({ started: false, startError: 'no answer' }));
    assert.equal(result.score, 0);
    assert.deepEqual(result.issues.map((issue) => issue.code), ['compat_handshake_failed']);
  });

  it('flags an older protocol, listing failures, pagination loops, duplicates and changed tools', () => {
    assert.deepEqual(codes(cleanProbe({ protocolVersion: '2024-11-05' })), ['compat_older_protocol']);
    // Issue #24: both revisions Quiver speaks are current, the 2026-07-28 era included.
    assert.deepEqual(codes(cleanProbe({ protocolVersion: '2025-11-25' })), []);
    assert.deepEqual(codes(cleanProbe({ protocolVersion: '2026-07-28' })), []);
    const listing = cleanProbe().listing;
    assert.deepEqual(codes(cleanProbe({ listing: { ...listing, error: 'timed out' } })), ['compat_list_failed']);
    assert.deepEqual(codes(cleanProbe({ listing: { ...listing, repeatedCursor: true } })), ['compat_pagination_loop']);
    assert.deepEqual(codes(cleanProbe({ listing: { ...listing, duplicateNames: ['echo'] } })), ['compat_duplicate_tools']);
    assert.deepEqual(codes(cleanProbe(), [listing.tools[0]!]), ['compat_tools_changed']);
  });

  it('judges bad-argument calls: errors are clean, crashes, hangs and silent acceptance are not', () => {
    const calls = cleanProbe().calls.slice(0, 2);
    const withBad = (outcome: ProbeResult['calls'][number]['outcome']) => cleanProbe({ calls: [...calls, { tool: 'echo', kind: 'missing-required', outcome, latencyMs: 1 }] });
    assert.deepEqual(codes(withBad('tool-error')), []);
    assert.deepEqual(codes(withBad('crash')), ['compat_bad_args_crash']);
    assert.equal(score(withBad('crash')).score, 75);
    assert.deepEqual(codes(withBad('timeout')), ['compat_bad_args_hang']);
    assert.deepEqual(codes(withBad('result')), ['compat_bad_args_accepted']);
    assert.deepEqual(codes(cleanProbe({ calls })), ['compat_bad_args_not_tested']);
  });

  it('checks results against outputSchema with a real validator', () => {
    const [echo, weather] = cleanProbe().calls;
    assert.deepEqual(codes(cleanProbe({ calls: [echo!, { ...weather!, structuredContent: { celsius: 'warm' } }] })).filter((code) => code !== 'compat_bad_args_not_tested'), ['compat_output_mismatch']);
    assert.deepEqual(codes(cleanProbe({ calls: [echo!, { tool: 'get_weather', kind: 'valid', outcome: 'result', latencyMs: 1 }] })).filter((code) => code !== 'compat_bad_args_not_tested'), ['compat_output_mismatch']);
    const listing = cleanProbe().listing;
    const broken = { ...listing, tools: [listing.tools[0]!, { ...listing.tools[1]!, outputSchema: { type: 'object', properties: { celsius: { type: 'no-such-type' } } } }] };
    assert.deepEqual(codes(cleanProbe({ listing: broken })), ['compat_output_schema_invalid']);
  });
});

describe('provider format checks', () => {
  it('accepts plain object schemas for every provider', () => {
    assert.deepEqual(checkProviderFormats('fixture', cleanProbe().listing.tools, compile), []);
  });

  it('refuses top-level unions for OpenAI and Anthropic and notes lossy Gemini conversions and renames', () => {
    const tools = [
      { name: 'pick', inputSchema: { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { type: 'string' } } }] } },
      { name: 'map', inputSchema: { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'string' } }, n: { type: 'integer' } } } },
      { name: 'name with spaces', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
    ];
    const problems = checkProviderFormats('fixture', tools, compile);
    const summary = problems.map((problem) => `${problem.provider}:${problem.tool}:${problem.kind}`);
    assert.ok(summary.includes('openai:pick:invalid'), String(summary));
    assert.ok(summary.includes('anthropic:pick:invalid'), String(summary));
    assert.ok(summary.includes('gemini:map:lossy'), String(summary));
    assert.ok(summary.includes('openai:name with spaces:renamed'), String(summary));
  });

  it('knows the Gemini schema subset', () => {
    assert.equal(geminiSchemaProblem({ type: 'object', properties: { a: { type: 'string', enum: ['x'] }, b: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } }), undefined);
    assert.match(geminiSchemaProblem({ type: 'object', properties: {} }) ?? '', /without properties/);
    assert.match(geminiSchemaProblem({ type: 'object', properties: { a: { type: 'string', pattern: 'x' } } }) ?? '', /pattern/);
    assert.match(geminiSchemaProblem({ type: 'string', enum: [1] }) ?? '', /non-string enum/);
  });
});
