/**
 * The runtime-trust rule of issue #23 (trust/dynamic.ts): a plugin reaching for internal
 * services is demoted by its first attempt; a denied public host weighs lightly; the case the
 * issue found (5432, 6379 and the hub's port, then three user reports: 64 against 50) now ends
 * far below the threshold.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeTrustScore } from '../../src/trust/dynamic.ts';
import { internalHostKind } from '../../src/core/internal-address.ts';

const quiet = { calls: 0, failures: 0, meanLatencyMs: 0, stddevLatencyMs: 0, deniedEgress: 0, userReports: 0 };

it('one denied internal target alone crosses the default threshold of 50', () => {
  const { score } = runtimeTrustScore({ ...quiet, deniedEgress: 1, deniedInternalTargets: 1, deniedOther: 0 }, 10);
  assert.ok(score < 50, `score ${score}`);
});

it("the issue's case: 5432, 6379, the hub's port and three reports end far below 50", () => {
  const { score, factors } = runtimeTrustScore({ ...quiet, deniedEgress: 3, deniedInternalTargets: 3, deniedOther: 0, userReports: 3 }, 10);
  assert.equal(factors.penalties.egress, 75);
  assert.equal(factors.penalties.reports, 45);
  assert.equal(score, 0);
});

it('denied public hosts weigh lightly: four of them leave a plugin above the threshold', () => {
  const { score } = runtimeTrustScore({ ...quiet, deniedEgress: 4, deniedInternalTargets: 0, deniedOther: 4 }, 10);
  assert.equal(score, 80);
});

it('names internal hosts: addresses, localhost and local names; public names pass', () => {
  for (const host of ['127.0.0.1', '10.0.0.5', '169.254.169.254', 'localhost', 'db.localhost', 'postgres', 'metadata.google.internal', 'nas.local', '::1']) {
    assert.notEqual(internalHostKind(host), undefined, host);
  }
  for (const host of ['api.github.com', 'registry.npmjs.org', '8.8.8.8']) assert.equal(internalHostKind(host), undefined, host);
});
