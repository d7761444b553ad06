/**
 * The layer rule of docs/engineering.md, kept true: imports only go down
 * (core ← store ← config ← services ← fronts ← app), and a front never imports another front.
 * Every relative import of every non-test file under src/ is checked; a failure lists the
 * offending imports. The few allowed crossings are listed below with their reason.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const srcRoot = fileURLToPath(new URL('../src/', import.meta.url));

/** The layers, lowest first; a file's layer is its first path segment under src/. */
const LAYERS: ReadonlyArray<{ name: string; members: readonly string[] }> = [
  { name: 'core', members: ['core'] },
  { name: 'store', members: ['store'] },
  // config.ts parses store locations (store/open.ts), and services may read its types.
  { name: 'config', members: ['config.ts'] },
  { name: 'services', members: ['access', 'catalog', 'intelligence', 'jobs', 'openapi', 'plugins', 'retrieval', 'rollouts', 'runtime', 'selection', 'sessions', 'telemetry', 'trust', 'verification'] },
  { name: 'fronts', members: ['api', 'gateway', 'cli', 'web'] },
  // The composition root and the library entry points (index.ts, public/core.ts).
  { name: 'app', members: ['app.ts', 'composition', 'index.ts', 'public'] },
];

/** Crossings the rule allows, each with why: `from` and `to` are src-relative path prefixes. */
const ALLOWED: ReadonlyArray<{ from: string; to: string; why: string }> = [
  { from: 'cli/', to: 'app.ts', why: 'the CLI is the process entry: it opens the App (createApp, type App) that it hands to commands' },
  { from: 'cli/commands/serve.ts', to: 'composition/server', why: 'quiver serve starts the servers the composition root wires (server.ts), checking its flags first (server-flags.ts)' },
  { from: 'cli/bench/gateway-overhead.ts', to: 'gateway/', why: 'the gateway overhead bench measures the gateway front itself, in process, over the local test backend' },
];

/** One relative import: the importing file and the imported file, both relative to src/. */
export interface ImportEdge {
  from: string;
  to: string;
}

function layerOf(path: string): { rank: number; member: string } | undefined {
  const member = path.split('/')[0]!;
  const rank = LAYERS.findIndex((layer) => layer.members.includes(member));
  return rank < 0 ? undefined : { rank, member };
}

/** The edges that break the rule, as readable lines (empty when the rule holds). */
export function layerViolations(edges: readonly ImportEdge[]): string[] {
  const fronts = LAYERS.find((layer) => layer.name === 'fronts')!.members;
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const source = layerOf(from);
    const target = layerOf(to);
    if (source === undefined || target === undefined) {
      problems.push(`${from} -> ${to}: ${source === undefined ? from : to} is in no layer (add its folder to LAYERS)`);
      continue;
    }
    if (source.member === target.member) continue;
    if (ALLOWED.some((allowed) => from.startsWith(allowed.from) && to.startsWith(allowed.to))) continue;
    if (target.rank > source.rank) {
      problems.push(`${from} -> ${to}: ${LAYERS[source.rank]!.name} imports the higher layer ${LAYERS[target.rank]!.name}`);
    } else if (fronts.includes(source.member) && fronts.includes(target.member)) {
      problems.push(`${from} -> ${to}: the ${source.member} front imports the ${target.member} front`);
    }
  }
  return problems;
}

/** Relative module specifiers of a file: static imports and re-exports, side-effect and dynamic imports. */
export function importSpecifiers(text: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
  return [...text.matchAll(pattern)].map((match) => match[1]!);
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every relative import between files under src/ (tests excluded: they may reach across layers to set up). */
function srcImports(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(srcRoot)) {
    for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier);
      const to = relative(srcRoot, target);
      // Imports leaving src/ (bin/, test/) are another check's business.
      if (to.startsWith('..')) continue;
      edges.push({ from: relative(srcRoot, file), to });
    }
  }
  return edges;
}

describe('layer rule', () => {
  it('reads static, re-export, side-effect and dynamic imports', () => {
    const text = [
      "import { a } from '../core/a.ts';",
      "import type {\n  B,\n} from './b.ts';",
      "export { c } from '../../store/c.ts';",
      "import './side-effect.ts';",
      "const d = await import('../gateway/d.ts');",
      "import pino from 'pino';",
    ].join('\n');
    assert.deepEqual(importSpecifiers(text), ['../core/a.ts', './b.ts', '../../store/c.ts', './side-effect.ts', '../gateway/d.ts']);
  });

  it('names an upward import, a front importing a front and a folder in no layer; allows downward imports and the listed crossings', () => {
    assert.deepEqual(
      layerViolations([
        { from: 'store/open.ts', to: 'catalog/service.ts' },
        { from: 'cli/commands/tools.ts', to: 'api/app.ts' },
        { from: 'gateway/http.ts', to: 'composition/server.ts' },
        { from: 'attic/old.ts', to: 'core/errors.ts' },
        { from: 'api/routes/plugins.ts', to: 'plugins/service.ts' },
        { from: 'composition/server.ts', to: 'gateway/gateway.ts' },
        { from: 'selection/engine.ts', to: 'retrieval/index.ts' },
        { from: 'cli/run-cli.ts', to: 'app.ts' },
        { from: 'cli/bench/gateway-overhead.ts', to: 'gateway/gateway.ts' },
      ]),
      [
        'store/open.ts -> catalog/service.ts: store imports the higher layer services',
        'cli/commands/tools.ts -> api/app.ts: the cli front imports the api front',
        'gateway/http.ts -> composition/server.ts: fronts imports the higher layer app',
        'attic/old.ts -> core/errors.ts: attic/old.ts is in no layer (add its folder to LAYERS)',
      ],
    );
  });

  it('holds for every import under src/', () => {
    const edges = srcImports();
    // The walk found the tree (a wrong root would pass vacuously).
    assert.ok(edges.some((edge) => edge.from === 'app.ts' && edge.to === 'store/open.ts'), 'app.ts -> store/open.ts not found');
    const problems = layerViolations(edges);
    assert.deepEqual(problems, [], `imports that break the layer rule (docs/engineering.md):\n  ${problems.join('\n  ')}`);
  });
});
