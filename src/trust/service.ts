/**
 * @module trust/service
 * `createTrustService`: the effective trust of each plugin (verdict, admin grant or cap,
 * dynamic trust; effective.ts), its egress allow-list and decision log, user reports, and the
 * runtime score evaluated on a timer and on demand (issue #10). A grant above COMMUNITY is
 * refused unless the installed source is pinned (issue #23, source-pin.ts). Every change that alters how a
 * plugin starts is reported through `onChange` after it is committed, so the gateway drops the
 * cached launch spec and the plugin restarts with its new isolation on its next call.
 */
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { automaticTrustCeiling } from '../runtime/isolation-policy.ts';
import { trustLevelSchema } from '../runtime/types.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { findPluginRecordById, findPluginRecordByName, listPluginRecords, type PluginRecord } from '../store/repositories/plugins.ts';
import {
  deleteEgressDecisionsBefore,
  deleteEgressRule,
  insertEgressRule,
  insertTrustGrant,
  insertUserReport,
  listEgressDecisions,
  listEgressRules,
} from '../store/repositories/trust.ts';
import { createDecisionLog } from './decision-log.ts';
import { levelRank } from './effective.ts';
import { sourcePinOf } from './source-pin.ts';
import { createTrustReads } from './trust-reads.ts';
import { parseEgressTarget } from './egress-target.ts';
import { evaluateRuntimeTrust } from './runtime-trust.ts';
import { defaultTrustSettings, type TrustService, type TrustServiceOptions } from './types.ts';

function checkReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > 1000) throw new QuiverError(ErrorCodes.invalidInput, 'a reason (1 to 1000 characters) is required');
  return trimmed;
}

/** Creates the trust service; `start()` runs the periodic evaluation. */
export function createTrustService(options: TrustServiceOptions): TrustService {
  const { db } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'trust' });
  const now = options.clock ?? (() => new Date());
  const settings = { ...defaultTrustSettings, ...options.settings };
  const defaultLevel = options.defaultLevel ?? 'UNVERIFIED';
  const decisions = createDecisionLog({ db, logger, now });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const changed: NonNullable<TrustServiceOptions['onChange']> = (change) => {
    void refreshFactors().catch((error: unknown) => logger.warn({ err: error }, 'trust ranking factors could not be refreshed'));
    try {
      options.onChange?.(change);
    } catch (error) {
      logger.warn({ err: error, change }, 'trust onChange subscriber threw');
    }
  };
  const requestReverification = async (pluginId: string, reason: string): Promise<void> => {
    try {
      await options.requestReverification?.(pluginId, reason);
    } catch (error) {
      logger.warn({ err: error, pluginId }, 're-verification could not be queued');
    }
  };
  const runtimeDeps = { db, logger, now, settings, changed, requestReverification };
  const reads = createTrustReads({ db, settings, defaultLevel });
  const { launchTrustOf, view, refreshFactors } = reads;

  async function requirePlugin(reference: string): Promise<PluginRecord> {
    const record = isUuid(reference) ? await findPluginRecordById(db, reference) : await findPluginRecordByName(db, reference);
    if (record === undefined || record.status === 'removed') throw notFound('plugin', reference);
    return record;
  }

  async function evaluateAll(): Promise<void> {
    const records = await listPluginRecords(db, { includeRemoved: false });
    await evaluateRuntimeTrust(runtimeDeps, records.map((record) => record.id));
    await deleteEgressDecisionsBefore(db, new Date(now().getTime() - settings.egressLogDays * 86_400_000));
    await refreshFactors();
  }

  return {
    async view(reference) {
      return view(await requirePlugin(reference));
    },

    async launchTrust(pluginId) {
      const { trustLevel, egress } = await launchTrustOf(await requirePlugin(pluginId));
      return { trustLevel, egress };
    },

    async setTrust(reference, change) {
      const record = await requirePlugin(reference);
      const reason = checkReason(change.reason);
      if (change.kind !== 'clear' && change.level === undefined) throw new QuiverError(ErrorCodes.invalidInput, `--${change.kind === 'grant' ? 'level' : 'cap'} needs a trust level`);
      const level = change.kind === 'clear' ? null : trustLevelSchema.parse(change.level);
      if (change.kind === 'grant' && level !== null && levelRank(level) > levelRank(automaticTrustCeiling)) {
        // Issue #23: the levels that loosen isolation are granted to code that cannot change under the grant.
        const pin = await sourcePinOf(record);
        if (!pin.pinned) {
          throw new QuiverError(
            ErrorCodes.invalidInput,
            `cannot grant ${level} to '${record.name}': its source is ${pin.description}. ` +
              `Levels above ${automaticTrustCeiling} need a pinned source (a git commit, an npm version with an integrity hash); ` +
              `reinstall it from git or npm, or grant ${automaticTrustCeiling}.`,
            { details: { reason: 'source_not_pinned', plugin: record.name, level, source: record.sourceType } },
          );
        }
      }
      await insertTrustGrant(db, { pluginId: record.id, kind: change.kind, level, reason, actor: change.actor, createdAt: now() });
      logger.info({ plugin: record.name, kind: change.kind, level, actor: change.actor }, 'plugin trust changed');
      changed({ kind: 'grant', pluginId: record.id });
      return view(record);
    },

    async allow(reference, target, allowOptions) {
      const record = await requirePlugin(reference);
      const rule = parseEgressTarget(target);
      const row = { pluginId: record.id, host: rule.host, port: rule.port, reason: allowOptions.reason?.trim().slice(0, 1000) ?? '', actor: allowOptions.actor, createdAt: now() };
      const created = await insertEgressRule(db, row);
      if (created) {
        logger.info({ plugin: record.name, host: rule.host, port: rule.port, actor: allowOptions.actor }, 'egress rule added');
        changed({ kind: 'egress', pluginId: record.id });
      }
      const stored = (await listEgressRules(db, record.id)).find((r) => r.host === rule.host && r.port === rule.port)!;
      return { rule: stored, created };
    },

    async deny(reference, target) {
      const record = await requirePlugin(reference);
      const rule = parseEgressTarget(target);
      const deleted = await deleteEgressRule(db, record.id, rule.host, rule.port);
      if (deleted) changed({ kind: 'egress', pluginId: record.id });
      return deleted;
    },

    async egress(reference, egressOptions = {}) {
      const record = await requirePlugin(reference);
      await decisions.flush();
      const launch = await launchTrustOf(record);
      const [rules, recent] = await Promise.all([listEgressRules(db, record.id), listEgressDecisions(db, record.id, Math.min(Math.max(egressOptions.limit ?? 50, 1), 1000))]);
      // A remote plugin (a URL, an OpenAPI document, a synced catalog) has no process in Quiver's sandbox.
      const remote = record.sourceType === 'url' || record.sourceType === 'openapi' || record.sourceType === 'sync';
      return { plugin: { id: record.id, name: record.name }, rules, decisions: recent, enforced: !remote && launch.egress !== undefined, level: launch.trustLevel, remote };
    },

    recordDecision: (decision) => decisions.record(decision),

    async report(reference, reportOptions) {
      const record = await requirePlugin(reference);
      const report = await insertUserReport(db, { pluginId: record.id, reason: checkReason(reportOptions.reason), actor: reportOptions.actor, createdAt: now() });
      logger.warn({ plugin: record.name, actor: reportOptions.actor }, 'plugin reported by a user');
      const [runtime] = await evaluateRuntimeTrust(runtimeDeps, [record.id]);
      await requestReverification(record.id, `user report: ${report.reason}`);
      return { report, runtime: runtime! };
    },

    async evaluate(reference) {
      await decisions.flush();
      if (reference === undefined) {
        const records = await listPluginRecords(db, { includeRemoved: false });
        const rows = await evaluateRuntimeTrust(runtimeDeps, records.map((record) => record.id));
        await refreshFactors();
        return rows;
      }
      return evaluateRuntimeTrust(runtimeDeps, [(await requirePlugin(reference)).id]);
    },

    rankingFactor: reads.rankingFactor,

    start() {
      // Tracked so that close() waits for it before the database goes.
      running = refreshFactors().catch((error: unknown) => logger.warn({ err: error }, 'trust ranking factors could not be read'));
      if (settings.evaluateIntervalMs <= 0 || timer) return;
      timer = setInterval(() => {
        running = decisions.flush().then(evaluateAll).catch((error: unknown) => logger.warn({ err: error }, 'runtime trust evaluation failed'));
      }, settings.evaluateIntervalMs);
      timer.unref();
    },

    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      await decisions.close();
    },
  };
}
