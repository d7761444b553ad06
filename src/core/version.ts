/**
 * @module core/version
 * Quiver's version as servers and clients announce it. Kept equal to package.json's by a test
 * (src/core/version.test.ts), so core stays free of file reads.
 */

/** The package version. */
export const QUIVER_VERSION = '0.1.0';
