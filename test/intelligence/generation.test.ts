/**
 * PID generation from a real TypeScript MCP server (issue #14): the zod-plugin fixture in a
 * real git repository, installed (discovery runs it in the sandbox), then generated from MCP
 * discovery, its zod shapes and its handlers' JSDoc. The zod constraints and JSDoc texts reach
 * the document with their provenance; generation never runs the plugin's code (the fixture
 * leaves a trace whenever it runs); unchanged sources are reused; a source change marks the
 * document stale and only the changed sources are regenerated; the example requests the
 * author wrote reach the catalog's example field.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createGenerationHarness, fixtureFolder, fixtureRepo, type FixtureRepo, type GenerationHarness } from './helpers.ts';

type Tool = Record<string, any>;
const toolOf = (document: Record<string, unknown>, name: string): Tool => (document['tools'] as Tool[]).find((tool) => tool['name'] === name)!;

describeEachBackend('PID generation from a TypeScript MCP server', (backend) => {
  let db: Database;
  let harness: GenerationHarness;
  let repo: FixtureRepo;
  let marker: string;
  const previousMarker = process.env.QUIVER_FIXTURE_MARKER;

  before(async () => {
    db = await backend.open();
    harness = await createGenerationHarness(db);
    repo = await fixtureRepo(harness.root);
    await harness.plugins.add(repo.remote, { name: 'notes' });
    // From here on, any run of the plugin's code in this process or a child it spawns leaves a line here.
    marker = join(harness.root, 'ran.log');
    process.env.QUIVER_FIXTURE_MARKER = marker;
  });
  after(async () => {
    if (previousMarker === undefined) delete process.env.QUIVER_FIXTURE_MARKER;
    else process.env.QUIVER_FIXTURE_MARKER = previousMarker;
    await harness.close();
    await rm(harness.root, { recursive: true, force: true });
    await db.close();
  });

  it('brings zod constraints, JSDoc and annotations into the document with provenance, without running the code', async () => {
    const report = await harness.pids.generate('notes');
    assert.equal(report.stored, true);
    assert.deepEqual([...report.regenerated].sort(), ['mcp', 'ts', 'zod']);
    const search = toolOf(report.document, 'search_notes');
    // Discovery (the SDK's own zod → JSON Schema) has the constraints; it outranks the zod reader.
    assert.equal(search.inputSchema.properties.query.minLength, 2);
    assert.equal(search.inputSchema.properties.limit.maximum, 50);
    assert.deepEqual(search.inputSchema.properties.sort.enum, ['relevance', 'newest', 'oldest']);
    assert.equal(report.provenance['tools.search_notes.inputSchema'], 'mcp');
    // JSDoc: llmNotes from @returns / @throws, an @example as an example input, @param texts where the schema had none.
    assert.match(search.llmNotes, /Returns the matching notes/);
    assert.match(search.llmNotes, /Fails when the query is empty/);
    assert.deepEqual(search.examples, [{ input: { query: 'meeting agenda', limit: 5 } }]);
    assert.equal(report.provenance['tools.search_notes.examples'], 'ts');
    const create = toolOf(report.document, 'create_note');
    assert.equal(create.inputSchema.properties.title.description, 'A short title shown in lists.');
    assert.equal(report.provenance['tools.create_note.inputSchema.properties.title.description'], 'ts');
    assert.equal(create.inputSchema.properties.tags.items.pattern, '^[a-z0-9-]+$');
    // Annotations: read-only means no side effects and a safe retry; destructive is said.
    assert.deepEqual(search.sideEffects, []);
    assert.equal(search.retrySafe, true);
    assert.equal(toolOf(report.document, 'delete_note').sideEffects[0].type, 'destructive');
    assert.equal(report.document['execution'] === undefined ? undefined : (report.document['execution'] as Tool).retryPolicy.maxRetries, 0);
    assert.equal(existsSync(marker), false, 'generation must not run the plugin code');
  });

  it('reads the zod shapes themselves when discovery is not asked for', async () => {
    const report = await harness.pids.generate('notes', { from: ['zod,ts'], dryRun: true });
    assert.equal(report.stored, false);
    const search = toolOf(report.document, 'search_notes');
    assert.equal(report.provenance['tools.search_notes.inputSchema'], 'zod');
    assert.equal(search.inputSchema.properties.query.minLength, 2);
    assert.equal(search.inputSchema.properties.query.description, 'Words to look for in titles and bodies');
    assert.equal(search.inputSchema.properties.limit.default, 10);
    assert.equal(search.inputSchema.properties.limit.type, 'integer');
    assert.deepEqual(search.inputSchema.required, ['query']);
    assert.equal(toolOf(report.document, 'delete_note').inputSchema.properties.id.exclusiveMinimum, 0);
    assert.equal(toolOf(report.document, 'delete_note').description, 'Delete a note by id', 'the registration (zod) outranks the JSDoc summary');
    assert.equal(existsSync(marker), false);
  });

  it('reuses unchanged sources, marks a source change stale and regenerates only what changed', async () => {
    const again = await harness.pids.generate('notes');
    assert.deepEqual([...again.reused].sort(), ['mcp', 'ts', 'zod']);
    assert.deepEqual(again.regenerated, []);
    assert.equal((await harness.pids.status('notes')).stale, false);

    const source = await readFile(join(repo.work, 'src/index.ts'), 'utf8');
    await repo.commit({ 'src/index.ts': source.replace('Creates a note and returns its id.', 'Creates a note (title, body, tags) and returns its id.') }, 'better JSDoc');
    await harness.plugins.update('notes');
    const status = await harness.pids.status('notes');
    assert.equal(status.stale, true);
    assert.deepEqual(status.staleSources, ['ts', 'zod']);
    assert.notEqual(status.currentHash, status.contentHash);

    // What a sync or update triggers: the same sources again, only the changed ones recomputed.
    const regenerated = (await harness.pids.refresh('notes'))!;
    assert.deepEqual([...regenerated.regenerated].sort(), ['ts', 'zod']);
    assert.deepEqual(regenerated.reused, ['mcp'], 'the compiled server did not change, so discovery did not');
    assert.equal(toolOf(regenerated.document, 'create_note').description, 'Create a new note');
    assert.equal(regenerated.contentHash, (await harness.pids.status('notes')).contentHash);
    assert.equal((await harness.pids.status('notes')).stale, false);
    assert.equal(existsSync(marker), false);
  });

  it('diffs the generated document against the current one with the source of each change', async () => {
    const { changes, against } = await harness.pids.diff('notes');
    assert.equal(against, 'none');
    const llmNotes = changes.find((change) => change.path === 'tools.search_notes.llmNotes');
    assert.equal(llmNotes?.kind, 'added');
    assert.equal(llmNotes?.source, 'ts');
  });

  it('generates from a folder that is not installed, reading code only', async () => {
    const folder = await fixtureFolder(harness.root, 'loose');
    const report = await harness.pids.generateFromPath(folder);
    assert.equal(report.stored, false);
    assert.equal(report.toolCount, 3);
    assert.ok(report.warnings.some((warning) => warning.startsWith('mcp:')));
    assert.equal(existsSync(marker), false);
  });
});

describe('PID generation input errors', () => {
  it('names the valid sources when --from has an unknown one', async () => {
    const { parseSources } = await import('../../src/intelligence/index.ts');
    assert.throws(() => parseSources(['mcp,yaml']), /unknown source yaml \(use mcp, zod, ts, openapi, llm\)/);
    assert.deepEqual(parseSources(undefined).sources, ['mcp', 'zod', 'ts', 'openapi']);
  });
});

describe('the fixture leaves a trace when it runs', () => {
  it('writes QUIVER_FIXTURE_MARKER on start (so the no-execution checks above can fail)', async () => {
    const { spawn } = await import('node:child_process');
    const { openTempDir } = await import('../plugins/helpers.ts');
    const root = await openTempDir('pidgen-marker');
    try {
      const folder = await fixtureFolder(root);
      const trace = join(root, 'trace.log');
      const child = spawn(process.execPath, ['--import', './resolve-deps.mjs', 'dist/index.js'], { cwd: folder, env: { ...process.env, QUIVER_FIXTURE_MARKER: trace }, stdio: ['pipe', 'ignore', 'ignore'] });
      const deadline = Date.now() + 15_000;
      while (!existsSync(trace) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill();
      assert.equal(existsSync(trace), true);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
