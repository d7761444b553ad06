/**
 * The layer rule of docs/engineering.md, kept true: imports only go down
 * (core ← store ← config ← services ← fronts ← app), a front never imports another front, a
 * service imports only services before it in SERVICE_ORDER, and nothing imports in a circle:
 * no cycle of files, none of top-level folders (issue #28). Every relative import of every
 * non-test file under src/ (src/web's plain ES modules included) is checked, type-only imports
 * too (a cycle of types still says the parts do not form a tree); a failure lists the offending
 * imports. The few allowed crossings and the remaining cycles are listed below with their reason.
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
  // config.ts parses store locations (store/location.ts), and services may read its types;
  // config-location.ts is its schema-free part that places the store (issue #28).
  { name: 'config', members: ['config.ts', 'config-location.ts'] },
  { name: 'services', members: ['access', 'catalog', 'intelligence', 'jobs', 'openapi', 'plugins', 'retrieval', 'rollouts', 'runtime', 'selection', 'sessions', 'telemetry', 'trust', 'verification'] },
  { name: 'fronts', members: ['api', 'gateway', 'cli', 'web'] },
  // The composition root and the library entry points (index.ts, public/core.ts).
  { name: 'app', members: ['app.ts', 'composition', 'index.ts', 'public'] },
];

/** Crossings the rule allows, each with why: `from` and `to` are src-relative path prefixes. */
const ALLOWED: ReadonlyArray<{ from: string; to: string; why: string }> = [
  { from: 'cli/', to: 'app.ts', why: 'the CLI is the process entry: it opens the App (createApp, type App) that it hands to commands' },
  { from: 'cli/commands/serve.ts', to: 'composition/server', why: 'quiver serve starts the servers the composition root wires (server.ts), checking its flags first (server-flags.ts)' },
  { from: 'cli/bench/gateway-overhead.ts', to: 'gateway/', why: 'the gateway overhead bench measures the gateway front itself, in process, over the test backend it loads from the checkout (test/helpers/gateway-backend); benchmarks are not packed' },
];

/**
 * The services, lowest first: each may import only those before it (docs/engineering.md,
 * "Service order"). A service imports a later one only by taking an interface it declares.
 */
export const SERVICE_ORDER: readonly string[] = ['access', 'jobs', 'sessions', 'openapi', 'retrieval', 'catalog', 'selection', 'telemetry', 'runtime', 'trust', 'plugins', 'verification', 'intelligence', 'rollouts'];

/**
 * File cycles still to break, by the folder that wholly holds them: a cycle elsewhere, or one
 * leaving its folder, fails; an entry whose folder has no cycle left fails too (remove it: the
 * list only shrinks). Empty since #28 broke the last ones (rollouts: the staged-verification
 * types moved to types.ts); the lists stay so that a cycle other work cannot break at once is
 * named here with its reason rather than hidden.
 */
export const ALLOWED_FILE_CYCLES: ReadonlyArray<{ folder: string; why: string }> = [];

/** Cycles among top-level folders still to break, each as its exact set of members, with why. */
export const ALLOWED_FOLDER_CYCLES: ReadonlyArray<{ members: readonly string[]; why: string }> = [];

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
    const services = LAYERS.find((layer) => layer.name === 'services')!.members;
    if (services.includes(source.member) && services.includes(target.member)) {
      const sourceOrder = SERVICE_ORDER.indexOf(source.member);
      const targetOrder = SERVICE_ORDER.indexOf(target.member);
      if (sourceOrder < 0 || targetOrder < 0) problems.push(`${from} -> ${to}: ${sourceOrder < 0 ? source.member : target.member} is not in SERVICE_ORDER`);
      else if (targetOrder > sourceOrder) problems.push(`${from} -> ${to}: the service ${source.member} imports ${target.member}, which comes after it in SERVICE_ORDER`);
      continue;
    }
    if (target.rank > source.rank) {
      problems.push(`${from} -> ${to}: ${LAYERS[source.rank]!.name} imports the higher layer ${LAYERS[target.rank]!.name}`);
    } else if (fronts.includes(source.member) && fronts.includes(target.member)) {
      problems.push(`${from} -> ${to}: the ${source.member} front imports the ${target.member} front`);
    }
  }
  return problems;
}

/** The strongly connected groups of more than one node (Tarjan), each sorted; `key` maps a file to its node. */
export function cycles(edges: readonly ImportEdge[], key: (path: string) => string = (path) => path): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [key(from), key(to)];
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    if (a !== b) next.get(a)!.add(b);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return groups.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The top-level folder (or root file) of a src-relative path. */
const topFolder = (path: string): string => path.split('/')[0]!;

/**
 * The cycles that break the rule, as readable lines: file cycles outside the allowed folders,
 * cycles of top-level folders not listed, and allowed entries with nothing left to allow.
 */
export function cycleViolations(
  edges: readonly ImportEdge[],
  allowedFiles: ReadonlyArray<{ folder: string }> = ALLOWED_FILE_CYCLES,
  allowedFolders: ReadonlyArray<{ members: readonly string[] }> = ALLOWED_FOLDER_CYCLES,
): string[] {
  const problems: string[] = [];
  const usedFolders = new Set<string>();
  for (const group of cycles(edges)) {
    const allowed = allowedFiles.find(({ folder }) => group.every((file) => file.startsWith(folder)));
    if (allowed) usedFolders.add(allowed.folder);
    else problems.push(`file cycle: ${group.join(' <-> ')}`);
  }
  for (const { folder } of allowedFiles) {
    if (!usedFolders.has(folder)) problems.push(`${folder} has no file cycle any more: remove it from ALLOWED_FILE_CYCLES`);
  }
  const folderGroups = cycles(edges, topFolder).map((group) => group.join(' <-> '));
  const allowedGroups = allowedFolders.map(({ members }) => [...members].sort().join(' <-> '));
  for (const group of folderGroups) if (!allowedGroups.includes(group)) problems.push(`folder cycle: ${group}`);
  for (const group of allowedGroups) if (!folderGroups.includes(group)) problems.push(`${group} is no longer a folder cycle: remove or shrink it in ALLOWED_FOLDER_CYCLES`);
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
    // src/web is plain ES modules served to the browser (.js); everything else is TypeScript.
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
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

  it('names a service importing a later service and a service missing from the order; allows earlier ones', () => {
    assert.deepEqual(
      layerViolations([
        { from: 'catalog/service.ts', to: 'plugins/service.ts' },
        { from: 'selection/engine.ts', to: 'catalog/index.ts' },
        { from: 'plugins/service.ts', to: 'runtime/index.ts' },
        { from: 'runtime/supervisor/call-tool.ts', to: 'telemetry/tracing/spans.ts' },
        { from: 'telemetry/index.ts', to: 'runtime/types.ts' },
      ]),
      [
        'catalog/service.ts -> plugins/service.ts: the service catalog imports plugins, which comes after it in SERVICE_ORDER',
        'telemetry/index.ts -> runtime/types.ts: the service telemetry imports runtime, which comes after it in SERVICE_ORDER',
      ],
    );
  });

  it('finds file and folder cycles, allows only the listed ones and names a listed one that is gone', () => {
    const edges: ImportEdge[] = [
      // A planted cycle of three files in one folder.
      { from: 'catalog/a.ts', to: 'catalog/b.ts' },
      { from: 'catalog/b.ts', to: 'catalog/c.ts' },
      { from: 'catalog/c.ts', to: 'catalog/a.ts' },
      // A cycle wholly inside an allowed folder.
      { from: 'rollouts/x.ts', to: 'rollouts/y.ts' },
      { from: 'rollouts/y.ts', to: 'rollouts/x.ts' },
      // A planted cycle of folders, not of files.
      { from: 'runtime/call.ts', to: 'telemetry/spans.ts' },
      { from: 'telemetry/collect.ts', to: 'runtime/types.ts' },
      // A tree: no cycle.
      { from: 'selection/engine.ts', to: 'catalog/a.ts' },
    ];
    assert.deepEqual(cycles(edges), [['catalog/a.ts', 'catalog/b.ts', 'catalog/c.ts'], ['rollouts/x.ts', 'rollouts/y.ts']]);
    assert.deepEqual(
      cycleViolations(edges, [{ folder: 'rollouts/' }, { folder: 'plugins/install/' }], [{ members: ['cli', 'composition'] }]),
      [
        'file cycle: catalog/a.ts <-> catalog/b.ts <-> catalog/c.ts',
        'plugins/install/ has no file cycle any more: remove it from ALLOWED_FILE_CYCLES',
        'folder cycle: runtime <-> telemetry',
        'cli <-> composition is no longer a folder cycle: remove or shrink it in ALLOWED_FOLDER_CYCLES',
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

  it('has no import cycles under src/ but the listed ones, and src/web is walked', () => {
    const edges = srcImports();
    assert.ok(edges.some((edge) => edge.from === 'web/app.js' && edge.to === 'web/trust.js'), 'web/app.js -> web/trust.js not found');
    const problems = cycleViolations(edges);
    assert.deepEqual(problems, [], `import cycles (docs/engineering.md):\n  ${problems.join('\n  ')}`);
  });
});
