/**
 * Child process of the memory benchmark (see memory.ts). `seed FOLDER N` creates the
 * embedded store in FOLDER and syncs N tools into it; `load FOLDER` opens that store as a
 * restarted server would, warms selection over every tool and reports memory. Prints one
 * JSON line.
 */
import { readFileSync } from 'node:fs';
import { openStore } from '../../store/open.ts';
import { pgliteMemory } from '../../store/pglite-database.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createSelectionEngine } from '../../selection/index.ts';
import { createPersistentRetrieval } from '../../selection/persistent-retrieval.ts';
import { storeToolTokenCounts } from '../../selection/token-counts.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { benchDataFile } from './bench-data.ts';

const [mode, folder, countText] = process.argv.slice(2);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
// Found before anything else so a missing data folder ends the child with its one-line message
// (the parent shows the tail of stderr, where a stack trace would bury it).
let sealFile: URL | undefined;
try {
  sealFile = mode === 'seed' ? benchDataFile('seal-tools', 'tools.jsonl') : undefined;
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
const { db } = await openStore({ kind: 'folder', path: folder! });
const rssAfterOpenMb = mb(process.memoryUsage().rss);

if (mode === 'seed') {
  const count = Number(countText ?? 10_000);
  const seal = readFileSync(sealFile!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { name: string; description: string; parameters?: Record<string, unknown> | null })
    .filter((t) => /^[A-Za-z0-9_.-]{1,100}$/.test(t.name));
  // Like the app: synced tools' token counts are stored (issue #28).
  const catalog = createCatalogService({ db, afterSync: storeToolTokenCounts });
  const perPlugin = 1_000;
  for (let start = 0; start < count; start += perPlugin) {
    const tools = [];
    for (let i = start; i < Math.min(count, start + perPlugin); i++) {
      const base = seal[i % seal.length]!;
      tools.push({ name: `${base.name}_${i}`, description: base.description, parameters: base.parameters ?? { type: 'object' } });
    }
    await catalog.syncPlugin({ pluginId: `bench-${start / perPlugin}`, version: '1.0.0', tools });
  }
  console.log(JSON.stringify({ rssAfterSyncMb: mb(process.memoryUsage().rss) }));
} else {
  const engine = createSelectionEngine({ db, listen: false, retrieval: () => createPersistentRetrieval({ db, embedder: createOfflineEmbedder() }) });
  const queries = ['send an email to my team', 'weather forecast for tomorrow', 'convert currency and book a flight', 'analyze the DNA sample'];
  let candidates = 0;
  for (let i = 0; i < 200; i++) candidates = (await engine.selectTools({ query: queries[i % queries.length]!, k: 7, log: false })).metadata.candidateCount;
  const usage = process.memoryUsage();
  // The database thread's heap and PGlite's WebAssembly memory are in the RSS but not in this
  // thread's heap figures: reported beside them so the RSS can be accounted for.
  const thread = await pgliteMemory(db);
  console.log(
    JSON.stringify({
      tools: candidates,
      rssAfterOpenMb,
      rssLoadedMb: mb(usage.rss),
      heapUsedMb: mb(usage.heapUsed),
      heapTotalMb: mb(usage.heapTotal),
      externalMb: mb(usage.external),
      databaseThreadHeapMb: mb(thread?.heapTotal ?? 0),
      wasmMemoryMb: mb(thread?.wasmMemory ?? 0),
    }),
  );
  await engine.close();
}
await db.close();
