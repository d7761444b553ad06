/**
 * The static zod and JSDoc readers on source text: the SDK's older `server.tool(...)` forms,
 * `z.object(...)` as an input schema, shapes and handlers declared in another file, unions,
 * records, literals, nullish and coerced fields, and a construct that cannot be read statically
 * (a helper call), which is left without constraints and warned about instead of guessed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scanCode } from './code-scan.ts';
import { zodSource } from './zod.ts';
import { typescriptSource } from './typescript.ts';

const SHAPES = `import { z } from 'zod';
export const lookupShape = z.object({
  kind: z.union([z.literal('user'), z.literal('team')]),
  labels: z.record(z.string(), z.number().nonnegative()),
  page: z.coerce.number().int().gte(1).optional(),
  since: z.string().datetime().nullish(),
  extra: makeSchema(),
});
/** Looks up users or teams. @param kind Which directory to search. @returns Matching entries. */
export function lookup(args: unknown) { return args; }
`;

const SERVER = `import { lookupShape, lookup } from './shapes.js';
import { z } from 'zod';
server.tool('ping', async () => ({ content: [] }));
server.tool('echo', 'Echo text back', { text: z.string().max(10) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
server.tool('peek', { id: z.string().uuid() }, { readOnlyHint: true }, async () => ({ content: [] }));
server.registerTool('lookup', { description: 'Directory lookup', inputSchema: lookupShape }, lookup);
`;

describe('static zod and JSDoc reading', () => {
  const scan = scanCode([{ path: 'src/shapes.ts', text: SHAPES }, { path: 'src/server.ts', text: SERVER }]);
  const zod = zodSource(scan, 'hash');
  const ts = typescriptSource(scan, 'hash');

  it('finds every registration form', () => {
    assert.deepEqual(scan.registrations.map((registration) => registration.name), ['echo', 'lookup', 'peek', 'ping']);
    assert.equal(zod.partial.tools['echo']!['description'], 'Echo text back');
    assert.deepEqual(zod.partial.tools['echo']!['inputSchema'], { type: 'object', properties: { text: { type: 'string', maxLength: 10 } }, required: ['text'] });
    assert.deepEqual(zod.partial.tools['peek']!['inputSchema'], { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] });
    assert.deepEqual(zod.partial.tools['peek']!['sideEffects'], []);
    assert.deepEqual(zod.partial.tools['ping'], { name: 'ping' });
  });

  it('converts a z.object declared in another file, and says what it could not read', () => {
    const schema = zod.partial.tools['lookup']!['inputSchema'] as Record<string, any>;
    assert.deepEqual(schema.properties.kind, { anyOf: [{ const: 'user' }, { const: 'team' }] });
    assert.deepEqual(schema.properties.labels, { type: 'object', additionalProperties: { type: 'number', minimum: 0 } });
    assert.deepEqual(schema.properties.page, { type: 'integer', minimum: 1 });
    assert.deepEqual(schema.properties.since, { type: 'string', format: 'date-time' });
    assert.deepEqual(schema.properties.extra, {});
    assert.deepEqual(schema.required, ['kind', 'labels'], 'an unread field is not claimed to be required');
    assert.ok(zod.warnings.some((warning) => /src\/server\.ts:6 tool 'lookup': field 'extra' is not a zod schema read statically/.test(warning)), zod.warnings.join(' | '));
  });

  it('reads the JSDoc of a handler declared in another file', () => {
    const lookup = ts.partial.tools['lookup']!;
    assert.equal(lookup['description'], 'Looks up users or teams.');
    assert.equal(lookup['llmNotes'], 'Returns matching entries.');
    assert.deepEqual(lookup['inputSchema'], { type: 'object', properties: { kind: { description: 'Which directory to search.' } } });
    assert.equal(lookup['signature'], 'lookup(args: unknown)');
  });
});
