/**
 * The OpenAPI source of PID generation (issue #14) on the real Swagger Petstore documents
 * (OpenAPI 3.0 YAML and 3.1 JSON, test/fixtures/openapi): a folder holding `openapi.yaml` is
 * found without being told, operations become tools with their input schemas (`$ref`s
 * resolved), summaries, side effects from the HTTP method and the security schemes they need;
 * `--openapi FILE` reads a given document; a folder without one says so when openapi is named.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runPipeline } from '../../src/intelligence/pipeline.ts';
import { openTempDir, repoRoot } from '../plugins/helpers.ts';

type Tool = Record<string, any>;
const toolOf = (document: Record<string, unknown>, name: string): Tool | undefined => (document['tools'] as Tool[]).find((tool) => tool['name'] === name);

describe('PID generation from OpenAPI', () => {
  let root: string;
  before(async () => {
    root = await openTempDir('pid-openapi');
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('finds openapi.yaml in the folder and turns operations into tool definitions', async () => {
    const folder = join(root, 'petstore');
    await mkdir(folder);
    await copyFile(join(repoRoot, 'test/fixtures/openapi/petstore.yaml'), join(folder, 'openapi.yaml'));
    const report = await runPipeline({ pluginName: 'petstore', codeDir: folder, discovered: undefined, author: undefined }, { from: ['openapi'], explicit: true });
    assert.ok(report.toolCount >= 15, `${report.toolCount} tools`);
    const names = (report.document['tools'] as Tool[]).map((tool) => tool['name']);
    const get = names.find((name) => /getPetById/i.test(name))!;
    const remove = names.find((name) => /deletePet/i.test(name))!;
    assert.ok(get && remove, names.join(', '));
    assert.deepEqual(toolOf(report.document, get)!.sideEffects, []);
    assert.equal(toolOf(report.document, get)!.retrySafe, true);
    assert.equal(toolOf(report.document, remove)!.sideEffects[0].type, 'destructive');
    assert.equal(report.provenance[`tools.${get}.inputSchema`], 'openapi');
    const add = toolOf(report.document, names.find((name) => /addPet/i.test(name))!)!;
    // The Pet schema behind a $ref, inlined: its required name and photoUrls reach the tool.
    assert.match(JSON.stringify(add.inputSchema), /photoUrls/);
    assert.ok(add.requiredContext?.some((text: string) => /authentication: .*petstore_auth/.test(text)), JSON.stringify(add.requiredContext));
    assert.ok(report.document['safety'] !== undefined);
    assert.equal(report.regenerated.includes('openapi'), true);
  });

  it('reads a document given explicitly (3.1 JSON) and warns when a named source finds none', async () => {
    const empty = join(root, 'empty');
    await mkdir(empty);
    const given = await runPipeline({ pluginName: 'petstore31', codeDir: empty, discovered: undefined, author: undefined }, { from: ['openapi'], explicit: true, openApiPath: join(repoRoot, 'test/fixtures/openapi/petstore-3.1.json') });
    assert.ok(given.toolCount >= 3);
    const none = await runPipeline({ pluginName: 'none', codeDir: empty, discovered: undefined, author: undefined }, { from: ['openapi'], explicit: true });
    assert.equal(none.toolCount, 0);
    assert.ok(none.warnings.some((warning) => /no OpenAPI document found/.test(warning)), none.warnings.join(' | '));
  });
});
