/**
 * Child process of the memory benchmark (see memory.ts). `seed FOLDER N` creates the
 * embedded store in FOLDER and syncs N tools into it; `load FOLDER` opens that store as a
 * restarted server would, warms selection over every tool and reports memory. Prints one
 * JSON line.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../store/open.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createSelectionEngine } from '../../selection/index.ts';
import { createPersistentRetrieval } from '../../selection/persistent-retrieval.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';

const [mode, folder, countText] = process.argv.slice(2);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const { db } = await openStore({ kind: 'folder', path: folder! });
const rssAfterOpenMb = mb(process.memoryUsage().rss);

if (mode === 'seed') {
  const count = Number(countText ?? 10_000);
  const seal = readFileSync(fileURLToPath(new URL('../../../../shared/bench/seal-tools/tools.jsonl', import.meta.url)), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { name: string; description: string; parameters?: Record<string, unknown> | null })
    .filter((t) => /^[A-Za-z0-9_.-]{1,100}$/.test(t.name));
  const catalog = createCatalogService({ db });
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
  console.log(JSON.stringify({ tools: candidates, rssAfterOpenMb, rssLoadedMb: mb(usage.rss), heapUsedMb: mb(usage.heapUsed), externalMb: mb(usage.external) }));
  await engine.close();
}
await db.close();
