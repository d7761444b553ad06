import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planCalls } from './call-plan.ts';
import { createSchemaCompiler } from './json-schema.ts';
import type { ProbeTool } from './types.ts';

const tools: ProbeTool[] = [
  { name: 'get_pet', description: 'Get a pet by id', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  { name: 'delete_pet', description: 'Delete a pet', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
];

describe('planCalls', () => {
  it('exercises every tool, with edge values, in a throwaway sandbox (issue #23)', () => {
    const plan = planCalls(tools, createSchemaCompiler(), 40);
    const called = plan.calls.map((call) => `${call.kind}:${call.tool}`);
    assert.ok(called.includes('valid:get_pet'));
    assert.ok(called.includes('exercise:delete_pet'));
    assert.ok(called.includes('edge:delete_pet'));
  });

  it('calls only reads, without edge values, when the calls reach a real service (remote and OpenAPI plugins)', () => {
    const plan = planCalls(tools, createSchemaCompiler(), 40, false);
    assert.deepEqual([...new Set(plan.calls.map((call) => call.tool))], ['get_pet']);
    assert.ok(plan.calls.every((call) => call.kind !== 'edge' && call.kind !== 'exercise'), JSON.stringify(plan.calls));
    assert.match(plan.skipped.find((entry) => entry.tool === 'delete_pet')?.reason ?? '', /real service/);
  });
});
