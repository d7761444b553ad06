/** The schema validation stage: manifest / PID / quiver.json rules and every tool schema compiled by ajv. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../core/logger.ts';
import type { StageContext, SubjectTool, VerificationSubject } from '../../types.ts';
import { schemaValidationStage } from './index.ts';

function context(subject: Partial<VerificationSubject>): StageContext {
  return {
    subject: { pluginId: 'p', pluginName: 'calc', version: '1', sourceType: 'path', source: {}, codeDir: null, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch: null, ...subject },
    settings: { registryUrl: '', licenseAllowList: [], stageTimeoutMs: 1000 },
    logger: silentLogger,
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

const good: SubjectTool[] = [
  { name: 'add', description: 'Add two numbers.', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, outputSchema: { type: 'object', properties: { sum: { type: 'number' } } } },
  { name: 'when', description: 'A date.', inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { day: { type: 'string', format: 'date' } }, $defs: { x: { type: 'string' } } } },
];

it('scores 100 for valid documents and schemas, checking quiver.json in the code folder', async () => {
  const codeDir = await mkdtemp(join(tmpdir(), 'quiver-schema-stage-'));
  await writeFile(
    join(codeDir, 'quiver.json'),
    JSON.stringify({ name: 'calc', version: '1.0.0', manifest: { title: 'Calculator', summary: 'Adds numbers.', whenToUse: ['adding'], examples: [{ user: 'add 2 and 3', tool: 'add', args: { a: 2, b: 3 } }] } }),
  );
  const result = await schemaValidationStage(context({ codeDir, tools: good }));
  assert.deepEqual(result.issues, []);
  assert.equal(result.score, 100);
  assert.deepEqual(result.metrics, { documents: ['quiver.json'], schemasCompiled: 3, schemasFailed: 0, tools: 2 });
});

it('names each tool whose schema does not compile or is not an object schema, and document errors', async () => {
  const tools: SubjectTool[] = [
    ...good,
    { name: 'typo', description: 'Broken.', inputSchema: { type: 'object', properties: { a: { type: 'strnig' } } } },
    { name: 'array', description: '', inputSchema: { type: 'array' } },
    { name: 'badout', description: 'Bad output.', inputSchema: { type: 'object' }, outputSchema: { type: 'object', required: 'sum' } },
  ];
  const manifest = { title: 'Calculator', summary: 'Adds.', examples: [{ user: 'x', tool: 'nope' }] };
  const result = await schemaValidationStage(context({ tools, manifest }));
  const byTool = (name: string) => result.issues.filter((issue) => issue.location === `tool:${name}`).map((issue) => issue.code);
  assert.deepEqual(byTool('typo'), ['invalid_input_schema']);
  assert.deepEqual(byTool('array'), ['invalid_input_schema', 'no_description']);
  assert.deepEqual(byTool('badout'), ['invalid_output_schema']);
  assert.deepEqual(byTool('add'), []);
  assert.ok(result.issues.some((issue) => issue.code === 'document_error' && /nope/.test(issue.message)), JSON.stringify(result.issues));
  assert.ok(result.score < 50, `score ${result.score}`);
  assert.equal((result.metrics as { schemasFailed: number }).schemasFailed, 3);
});

it('a plugin that serves no tools scores 0', async () => {
  const result = await schemaValidationStage(context({ tools: [] }));
  assert.equal(result.score, 0);
  assert.ok(result.issues.some((issue) => issue.code === 'no_tools'));
});
