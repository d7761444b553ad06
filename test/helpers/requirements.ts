/**
 * @module test/helpers/requirements
 * A suite that cannot run fails in CI instead of skipping (issue #15): `skipUnless(problem)`
 * gives node:test's `skip` value for a missing capability (bubblewrap, setpriv, cgroups) on a
 * developer's machine, but under CI (`CI=true`, set by `.ci/run`) a missing capability throws,
 * so the test file fails and names what the machine lacks.
 */

/** `false` when nothing is missing; the reason to skip on a developer machine; throws under CI. */
export function skipUnless(problem: string | undefined | false): false | string {
  if (!problem) return false;
  if (process.env.CI === 'true') throw new Error(`CI must run this suite, but ${problem} (provision it in scripts/provision/system.sh)`);
  return problem;
}
