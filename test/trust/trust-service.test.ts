/**
 * The trust service on every backend (issue #10): grants and caps recorded with who and why,
 * the effective level a plugin launches with, egress rules and decisions, user reports and
 * dynamic trust from real call events.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createTrustService } from '../../src/trust/service.ts';
import type { TrustChange, TrustService } from '../../src/trust/types.ts';
import { insertPluginCallEvents } from '../../src/store/repositories/plugin-call-events.ts';

describeEachBackend('trust service', (backend) => {
  let db: Database;
  let trust: TrustService;
  const changes: TrustChange[] = [];
  const reverify: Array<[string, string]> = [];
  const ids: Record<string, string> = {};

  before(async () => {
    db = await backend.open();
    // 'plain' is a local folder (not pinned); the others are pinned git commits, verified COMMUNITY
    // (the ceiling of verification, issue #23) and granted their level by an admin below.
    const commit = 'a'.repeat(40);
    for (const [name, level, sourceType, source] of [['plain', null, 'path', { path: '/srv/plain' }], ['flaky', 'COMMUNITY', 'git', { commit }], ['steady', 'COMMUNITY', 'git', { commit }], ['official', 'COMMUNITY', 'git', { commit }]] as const) {
      ids[name] = (await db.query<{ id: string }>("INSERT INTO plugins (name, version, trust_level, source_type, source) VALUES ($1, '1.0.0', $2, $3, $4::jsonb) RETURNING id", [name, level, sourceType, JSON.stringify(source)])).rows[0]!.id;
    }
    trust = createTrustService({
      db,
      settings: { evaluateIntervalMs: 0, minCalls: 10, runtimeThreshold: 50 },
      onChange: (change) => changes.push(change),
      requestReverification: (pluginId, reason) => void reverify.push([pluginId, reason]),
    });
    for (const [name, level] of [['flaky', 'ENTERPRISE'], ['steady', 'ENTERPRISE'], ['official', 'OFFICIAL']] as const) {
      await trust.setTrust(name, { kind: 'grant', level, reason: 'reviewed', actor: 'cli' });
    }
  });
  after(async () => {
    await trust.close();
    await db.close();
  });

  it('records grants, caps and clears with who and why, newest in force, history kept', async () => {
    const before = await trust.view('plain');
    assert.equal(before.effective.level, 'UNVERIFIED');
    assert.deepEqual(before.isolation, { sandbox: true, network: 'none' });
    const granted = await trust.setTrust('plain', { kind: 'grant', level: 'COMMUNITY', reason: 'reviewed by ops', actor: 'key:k1:ops-admin' });
    assert.equal(granted.effective.level, 'COMMUNITY');
    assert.deepEqual(granted.isolation, { sandbox: true, network: 'allow-list' });
    assert.equal(granted.grant?.actor, 'key:k1:ops-admin');
    assert.equal(granted.grant?.reason, 'reviewed by ops');
    assert.deepEqual(changes.at(-1), { kind: 'grant', pluginId: ids.plain });
    assert.equal((await trust.view('official')).effective.level, 'OFFICIAL');
    assert.deepEqual((await trust.view('official')).isolation, { sandbox: true, network: 'host' }, 'the loosest level is still sandboxed (issue #23)');
    // The newest row is in force: a cap replaces the grant, and a cap never raises the verified COMMUNITY.
    await trust.setTrust('official', { kind: 'cap', level: 'ENTERPRISE', reason: 'new publisher', actor: 'cli' });
    assert.equal((await trust.view('official')).effective.level, 'COMMUNITY');
    const cleared = await trust.setTrust('official', { kind: 'clear', reason: 'publisher checked', actor: 'cli' });
    assert.equal(cleared.effective.level, 'COMMUNITY', 'verification alone never goes above COMMUNITY');
    assert.equal(cleared.grant, null);
    assert.deepEqual(cleared.history.map((row) => [row.kind, row.level, row.actor]), [['clear', null, 'cli'], ['cap', 'ENTERPRISE', 'cli'], ['grant', 'OFFICIAL', 'cli']]);
    await trust.setTrust('official', { kind: 'grant', level: 'OFFICIAL', reason: 'publisher checked', actor: 'cli' });
    await assert.rejects(trust.setTrust('plain', { kind: 'grant', level: 'OFFICIAL', reason: '  ', actor: 'cli' }), /reason/);
    // Issue #23: no grant above COMMUNITY on a source that can change under it.
    await assert.rejects(trust.setTrust('plain', { kind: 'grant', level: 'ENTERPRISE', reason: 'mine', actor: 'cli' }), (error: Error & { code?: string }) => error.code === 'invalid_input' && /cannot grant ENTERPRISE to 'plain': its source is local folder \/srv\/plain .*pinned source/.test(error.message));
    await assert.rejects(trust.setTrust('plain', { kind: 'cap', reason: 'x', actor: 'cli' }), /needs a trust level/);
    await assert.rejects(trust.view('nope'), (error: Error & { code?: string }) => error.code === 'not_found');
  });

  it('gives a launch its level and allow-list: none for UNVERIFIED, enforced below OFFICIAL once rules exist', async () => {
    assert.deepEqual(await trust.launchTrust(ids.plain!), { trustLevel: 'COMMUNITY', egress: [] });
    const added = await trust.allow('plain', '127.0.0.1:5432', { reason: 'its database', actor: 'cli' });
    assert.equal(added.created, true);
    assert.equal(added.rule.reason, 'its database');
    assert.equal((await trust.allow('plain', '127.0.0.1:5432', { actor: 'cli' })).created, false);
    assert.deepEqual(await trust.launchTrust(ids.plain!), { trustLevel: 'COMMUNITY', egress: [{ host: '127.0.0.1', port: 5432 }] });
    // ENTERPRISE is held to its allow-list (empty until an admin adds rules; issue #23).
    assert.deepEqual(await trust.launchTrust(ids.steady!), { trustLevel: 'ENTERPRISE', egress: [] });
    await trust.allow('steady', 'api.example.com', { actor: 'cli' });
    assert.deepEqual(await trust.launchTrust(ids.steady!), { trustLevel: 'ENTERPRISE', egress: [{ host: 'api.example.com', port: 443 }] });
    assert.equal(await trust.deny('steady', 'api.example.com:443'), true);
    assert.equal(await trust.deny('steady', 'api.example.com:443'), false);
    assert.equal((await trust.egress('official')).enforced, false, 'OFFICIAL without rules has the host network');
    await trust.allow('official', 'api.example.com', { actor: 'cli' });
    assert.equal((await trust.egress('official')).enforced, true, 'OFFICIAL is sandboxed too: rules an admin wrote are held (issue #23)');
  });

  it('stores every egress decision reported by the sandbox and lists the recent ones', async () => {
    trust.recordDecision({ pluginId: ids.plain!, label: 'plain', host: '127.0.0.1', port: 5432, allowed: true });
    trust.recordDecision({ pluginId: ids.plain!, label: 'plain', host: 'evil.example', port: 0, allowed: false });
    const egress = await trust.egress('plain');
    assert.equal(egress.enforced, true);
    assert.deepEqual(egress.rules.map((rule) => `${rule.host}:${rule.port}`), ['127.0.0.1:5432']);
    assert.deepEqual(egress.decisions.map((d) => `${d.host}:${d.port}:${d.allowed}`).sort(), ['127.0.0.1:5432:true', 'evil.example:0:false']);
  });

  it('a plugin failing most calls drops below the threshold: one level less at its next start, re-verification queued, ranked lower', async () => {
    const at = new Date();
    const events = (pluginId: string, name: string, failures: number) =>
      Array.from({ length: 20 }, (_, index) => ({
        pluginId, pluginName: name, toolName: 't', latencyMs: 10 + (index % 3), outcome: index < failures ? ('error' as const) : ('success' as const),
        errorClass: index < failures ? 'tool_error' : null, sessionId: null, createdAt: at,
      }));
    await insertPluginCallEvents(db, [...events(ids.flaky!, 'flaky', 18), ...events(ids.steady!, 'steady', 0)]);
    assert.equal((await trust.view('flaky')).effective.level, 'ENTERPRISE');
    const rows = await trust.evaluate();
    const flaky = rows.find((row) => row.pluginId === ids.flaky)!;
    const steady = rows.find((row) => row.pluginId === ids.steady)!;
    assert.ok(flaky.score < 50 && flaky.belowThreshold, `flaky scored ${flaky.score}`);
    assert.equal(steady.score, 100);
    assert.equal((await trust.launchTrust(ids.flaky!)).trustLevel, 'COMMUNITY');
    assert.deepEqual((await trust.view('flaky')).isolation, { sandbox: true, network: 'allow-list' }, 'sandboxed at its next start');
    assert.equal((await trust.launchTrust(ids.steady!)).trustLevel, 'ENTERPRISE');
    assert.ok(changes.some((change) => change.kind === 'runtime' && change.pluginId === ids.flaky));
    assert.deepEqual(reverify.filter(([id]) => id === ids.flaky).length, 1);
    assert.match(reverify.find(([id]) => id === ids.flaky)![1], /runtime trust \d+ below threshold 50/);
    // A second evaluation does not queue it again (no new crossing).
    await trust.evaluate('flaky');
    assert.equal(reverify.filter(([id]) => id === ids.flaky).length, 1);
    assert.ok(trust.rankingFactor(ids.flaky!) < trust.rankingFactor(ids.steady!));
    assert.equal(trust.rankingFactor(ids.steady!), 1);
  });

  it('a user report is stored, lowers runtime trust and queues re-verification', async () => {
    const { report, runtime } = await trust.report('steady', { reason: 'asked for my SSH key', actor: 'key:k2:alice' });
    assert.equal(report.actor, 'key:k2:alice');
    assert.equal(runtime.score, 85, 'a user report costs 15 (trust/dynamic.ts)');
    assert.equal((runtime.factors as { userReports: number }).userReports, 1);
    assert.deepEqual(reverify.at(-1), [ids.steady, 'user report: asked for my SSH key']);
  });
});
