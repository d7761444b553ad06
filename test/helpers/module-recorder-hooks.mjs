// Loader hooks of module-recorder.mjs: appends the URL of every module loaded to the log file.
// A file of the CLI's bundle (dist/bundle/, scripts/bundle-cli.mjs) is logged with the modules
// it holds, as their URLs in the per-file build (dist/<path>.js), so a module-graph assertion
// reads the same whichever build the CLI started from.
import { appendFileSync, readFileSync } from 'node:fs';

let log;
const bundles = new Map();

export function initialize(data) {
  log = data.log;
}

/** The per-file URLs of the modules bundled into `url` (a dist/bundle/ file), or none. */
function bundledModules(url) {
  const match = /^(.*\/dist\/)bundle\/([^/]+\.js)$/.exec(url);
  if (!match) return [];
  const [, dist, file] = match;
  if (!bundles.has(dist)) {
    try {
      bundles.set(dist, JSON.parse(readFileSync(new URL(`${dist}bundle/modules.json`), 'utf8')));
    } catch {
      bundles.set(dist, {});
    }
  }
  return (bundles.get(dist)[file] ?? []).map((path) => `${dist}${path}.js`);
}

export async function load(url, context, nextLoad) {
  appendFileSync(log, `${[url, ...bundledModules(url)].join('\n')}\n`);
  return nextLoad(url, context);
}
