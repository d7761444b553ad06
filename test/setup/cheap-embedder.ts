/**
 * @module test/setup/cheap-embedder
 * Preloaded by scripts/run-tests.mjs into every test process: tests that do not care about
 * the embedder keep the cheap hashed one (no TF.js, no 512-d model per app). The variable is
 * set too, so `quiver` binaries that tests spawn inherit it. A test that wants the shipped
 * model passes QUIVER_EMBEDDER=model.
 */
import { setDefaultEmbedderKind } from '../../src/config.ts';

process.env.QUIVER_EMBEDDER ??= 'offline';
setDefaultEmbedderKind('offline');
