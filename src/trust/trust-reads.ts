/**
 * @module trust/trust-reads
 * What the trust service reads (issue #10): the inputs of a plugin's effective trust (its
 * verified level, the current grant or cap, runtime trust), the trust and allow-list it launches
 * with, the view `quiver plugin trust` shows, and the ranking factors, kept in memory and refreshed
 * after every change so that ranking never waits for the database.
 */
import { isolationPolicyFor } from '../runtime/isolation-policy.ts';
import { trustLevelSchema, type TrustLevel } from '../runtime/types.ts';
import type { Database } from '../store/database.ts';
import { listPluginRecords, type PluginRecord } from '../store/repositories/plugins.ts';
import { currentTrustGrants, listEgressRules, listRuntimeTrust, listTrustGrants } from '../store/repositories/trust.ts';
import { effectiveTrust, trustRankingFactor, type TrustInputs } from './effective.ts';
import { sourcePinOf } from './source-pin.ts';
import type { LaunchTrust, TrustSettings, TrustView } from './types.ts';

const rankingSteps = { step: 0.15, runtimePenalty: 0.3 };

function verifiedLevelOf(record: PluginRecord): TrustLevel | null {
  const parsed = trustLevelSchema.safeParse(record.trustLevel);
  return parsed.success ? parsed.data : null;
}

export interface TrustReads {
  inputsOf(record: PluginRecord): Promise<TrustInputs>;
  /** The level a plugin starts with and its allow-list (`rules`: how many rules it has, enforced or not). */
  launchTrustOf(record: PluginRecord): Promise<LaunchTrust & { rules: number }>;
  view(record: PluginRecord): Promise<TrustView>;
  /** Recomputes every plugin's ranking factor from the database. */
  refreshFactors(): Promise<void>;
  /** The last refreshed factor; a plugin the refresh has not seen is unknown, not known to be bad (1). */
  rankingFactor(pluginId: string): number;
}

export function createTrustReads(deps: { db: Database; settings: TrustSettings; defaultLevel: TrustLevel }): TrustReads {
  const { db, defaultLevel } = deps;
  const rankingSettings = { fullFrom: deps.settings.rankingFullFrom, ...rankingSteps };
  let factors = new Map<string, number>();

  async function inputsOf(record: PluginRecord): Promise<TrustInputs> {
    const [grants, runtime] = await Promise.all([currentTrustGrants(db, [record.id]), listRuntimeTrust(db, [record.id])]);
    const grant = grants.get(record.id);
    return {
      verifiedLevel: verifiedLevelOf(record),
      defaultLevel,
      grant: grant && grant.kind !== 'clear' ? { kind: grant.kind, level: grant.level as TrustLevel } : undefined,
      runtime: runtime.get(record.id),
      // Issue #23: a grant above COMMUNITY holds only while the installed source is pinned.
      ...(grant && grant.kind === 'grant' ? { source: await sourcePinOf(record) } : {}),
    };
  }

  async function launchTrustOf(record: PluginRecord): Promise<LaunchTrust & { rules: number }> {
    const level = effectiveTrust(await inputsOf(record)).level;
    const rules = (await listEgressRules(db, record.id)).map((rule) => ({ host: rule.host, port: rule.port }));
    // UNVERIFIED has no network at all (DESIGN §3.6), rules or not.
    if (level === 'UNVERIFIED') return { trustLevel: level, egress: undefined, rules: rules.length };
    const policy = isolationPolicyFor(level, {}, { egressRules: rules.length > 0 });
    return { trustLevel: level, egress: policy.network === 'allow-list' ? rules : undefined, rules: rules.length };
  }

  return {
    inputsOf,
    launchTrustOf,

    async view(record) {
      const inputs = await inputsOf(record);
      const effective = effectiveTrust(inputs);
      const launch = await launchTrustOf(record);
      const policy = isolationPolicyFor(effective.level, {}, { egressRules: launch.rules > 0 });
      const [grants, runtime] = await Promise.all([listTrustGrants(db, record.id), listRuntimeTrust(db, [record.id])]);
      const current = grants[0] && grants[0].kind !== 'clear' ? grants[0] : null;
      return {
        plugin: { id: record.id, name: record.name },
        verified: { score: record.trustScore, level: verifiedLevelOf(record) },
        grant: current,
        runtime: runtime.get(record.id) ?? null,
        effective,
        isolation: { sandbox: policy.sandbox, network: policy.network },
        egressRules: launch.rules,
        rankingFactor: trustRankingFactor(inputs, rankingSettings),
        history: grants,
      };
    },

    async refreshFactors() {
      const [records, grants, runtime] = await Promise.all([listPluginRecords(db, { includeRemoved: false }), currentTrustGrants(db), listRuntimeTrust(db)]);
      const next = new Map<string, number>();
      for (const record of records) {
        const grant = grants.get(record.id);
        const inputs = { verifiedLevel: verifiedLevelOf(record), defaultLevel, grant: grant && grant.kind !== 'clear' ? { kind: grant.kind, level: grant.level as TrustLevel } : undefined, runtime: runtime.get(record.id) };
        next.set(record.id, trustRankingFactor(inputs, rankingSettings));
      }
      factors = next;
    },

    rankingFactor: (pluginId) => factors.get(pluginId) ?? 1,
  };
}
