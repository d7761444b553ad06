/**
 * @module test/setup/cheap-embedder
 * Preloaded by scripts/run-tests.mjs into every test process: tests that do not care about
 * the embedder keep the cheap hashed one (no TF.js, no 512-d model or token table per app), while
 * the product default is the distilled token table (src/config.ts). The variable is set too, so
 * `quiver` binaries that tests spawn inherit it. A test that wants the table or the shipped
 * model passes QUIVER_EMBEDDER=table or model.
 */
import { setDefaultEmbedderKind } from '../../src/config.ts';

process.env.QUIVER_EMBEDDER ??= 'offline';
setDefaultEmbedderKind('offline');
