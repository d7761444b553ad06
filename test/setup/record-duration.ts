/**
 * @module test/setup/record-duration
 * Preloaded by scripts/run-tests.mjs into every test process: when a test file's process exits,
 * it appends "<file>\t<milliseconds since the process started>" to QUIVER_TEST_DURATIONS_LOG, so
 * the runner can print the slowest files after the run (the suite's time is bounded by CI's
 * limit). Wall time of the whole process: loading the file's imports counts too. The runner's own
 * process (no NODE_TEST_CONTEXT) records nothing.
 */
import { appendFileSync } from 'node:fs';

const log = process.env.QUIVER_TEST_DURATIONS_LOG;
const testFile = process.argv[1];
if (log && process.env.NODE_TEST_CONTEXT && testFile) {
  process.on('exit', () => {
    try {
      appendFileSync(log, `${testFile}\t${(process.uptime() * 1000).toFixed(0)}\n`);
    } catch {
      // A missing log folder must not fail a test file.
    }
  });
}
