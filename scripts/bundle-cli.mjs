// Bundles the CLI (src/cli/main.ts and everything it imports, statically or lazily) into a few
// files in dist/bundle/, for the start (issue #28): from the per-file build a `quiver serve`
// resolves and reads ~650 of Quiver's own files, `quiver --help` ~65; each costs a resolution,
// an open and a read, and the bundle turns them into a handful of chunks. Code splitting keeps
// every lazy import lazy (a chunk loads when the code that imports it runs). Packages stay
// external, resolved from node_modules as before. The per-file build stays beside it: the
// package's `exports`, the .d.ts files, and whatever is loaded by path (the verification
// child process, the benches) use it.
//
// Every bundle file sits directly in dist/bundle/, so a module's `import.meta.url` is rewritten
// to the URL the module has in the per-file build (`../<path>.js` from dist/bundle/): what it
// finds relative to itself (migrations, web files, the PGlite template, models, bin/) is found
// as before. The benches (src/cli/bench, left out of the published package) are not bundled:
// their import points at the per-file build. dist/bundle/modules.json lists the modules of each
// bundle file, for tests that assert which modules a start loads.
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { build } from 'esbuild';

/** Bundles src/cli/main.ts into `root`/dist/bundle/cli.js and its chunks; returns how many .js files. */
export async function bundleCli(root) {
  const src = join(root, 'src');
  const out = join(root, 'dist', 'bundle');
  const perFileUrl = (file) => `../${relative(src, file).split(sep).join('/').replace(/\.ts$/, '.js')}`;
  const result = await build({
    absWorkingDir: root,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // Node 20 still starts it (and says what it lacks), as it runs the per-file build.
    target: 'node20',
    packages: 'external',
    // No keepNames (issue #28): it wraps every function and class in a `__name` call that runs
    // each time a closure is created (3.6 % of the stdio server's busy samples per call). esbuild
    // renames only names that collide across modules (`search2`); no code reads a function's or
    // class's `.name` (error names are set explicitly), and the source map gives stack traces
    // their original names (`--enable-source-maps`).
    keepNames: false,
    sourcemap: true,
    chunkNames: 'chunk-[hash]',
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'quiver-per-file-layout',
        setup(builder) {
          builder.onResolve({ filter: /\/bench\// }, async (args) => {
            if (args.pluginData?.skip || (args.kind !== 'dynamic-import' && args.kind !== 'import-statement')) return undefined;
            const resolved = await builder.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: { skip: true } });
            if (resolved.errors.length > 0 || !resolved.path.startsWith(join(src, 'cli', 'bench') + sep)) return undefined;
            return { path: perFileUrl(resolved.path), external: true };
          });
          builder.onLoad({ filter: /\.ts$/ }, async (args) => {
            const code = await readFile(args.path, 'utf8');
            if (!code.includes('import.meta.url') || !args.path.startsWith(src + sep)) return { contents: code, loader: 'ts' };
            return { contents: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(perFileUrl(args.path))}, import.meta.url).href`), loader: 'ts' };
          });
        },
      },
    ],
  });
  const modules = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!file.endsWith('.js')) continue;
    modules[relative(out, join(root, file))] = Object.keys(output.inputs)
      .filter((input) => input.startsWith('src/'))
      .map((input) => input.slice('src/'.length).replace(/\.ts$/, ''));
  }
  await writeFile(join(out, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
  return Object.keys(modules).length;
}
