/**
 * @module selection/learning/learning
 * Learned example queries (DESIGN §3.10, seed 001 §7.4, issue #13): the selection engine's
 * outcome observer. A committed successful outcome is captured on a background queue
 * (capture.ts: redaction, caps, blocks), the scope's overlay is rebuilt differentially
 * (scopes.ts), and searches read the overlays without waiting (retrieval.ts). `flush()` waits
 * until everything observed so far ranks, for tests and `quiver eval --replay`.
 */
import type { Logger } from '../../core/logger.ts';
import { silentLogger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import {
  countLearnedExamples,
  deleteExpiredExamples,
  deleteLearnedExamples,
  learningBlocks,
  listLearnedExamples,
  setLearningBlocked,
  type LearnedExampleRow,
} from '../../store/repositories/learned-examples.ts';
import type { OutcomeObservation, OutcomeObserver } from '../engine/types.ts';
import { captureObservation, teachMissed, type CaptureResult, type QuarantineCheck, type SkipReason } from './capture.ts';
import { createMissedRequests, relatedRequests } from './missed-requests.ts';
import { textKey } from './redact.ts';
import { deleteExpiredTransitions } from '../../store/repositories/learned-transitions.ts';
import type { CalledAfterOverlay } from './called-after.ts';
import { createCalibratedQueue } from './calibrated-queue.ts';
import { contentTerms, type OverlayScoring, type ScopeOverlay } from './overlay.ts';
import { createTransitionScopes } from './transition-scopes.ts';
import { createScopeOverlays } from './scopes.ts';
import { defaultLearningSettings, orgScopeOf, type LearningSettings } from './settings.ts';
import type { FloorCalibration } from '../../retrieval/calibration.ts';
import type { AgreementCalibration } from './agreement.ts';

/** A request as the overlays score it. */
export interface AnalysedQuery {
  vector: Float32Array;
  terms: readonly string[];
}

/** Options of `createLearning`. */
export interface LearningOptions {
  db: Database;
  /** Embeds examples and requests (the app's embedder; the offline one needs no weights). */
  embedder: Embedder;
  settings?: Partial<LearningSettings>;
  logger?: Logger;
  clock?: () => Date;
  /** Issue #10's quarantine: a tool it names teaches nothing (none in this build: every tool may learn). */
  isQuarantined?: QuarantineCheck;
}

/** Counters of what learning did since start. */
export interface LearningStats {
  observed: number;
  learned: number;
  skipped: Partial<Record<SkipReason, number>>;
  errors: number;
  scopes: number;
  examples: number;
  /** "Called after" transitions recorded since start. */
  transitions: number;
  /** Requests that called nothing and were taught by a later request of their session (missed-requests.ts). */
  missesTaught: number;
  /** The similarity floor in use (absent until calibrated). */
  minSimilarity?: number;
  /** How the floor was computed for this embedder (issue #25). */
  calibration?: FloorCalibration;
  /** The lexical floor above which learned requests agree or conflict, and how it was computed. */
  agreement?: AgreementCalibration;
}

/** The learning service. */
export interface Learning extends OutcomeObserver {
  readonly settings: LearningSettings;
  /** A scope's overlay as built now (never waits; loads in the background when missing or stale). */
  overlayFor(orgId: string | null): ScopeOverlay | undefined;
  /** A scope's "called after" transitions as loaded now (never waits; loads in the background). */
  calledAfterFor(orgId: string | null): CalledAfterOverlay | undefined;
  /** A request's vector and content terms (memoised). */
  analyseQuery(query: string): Promise<AnalysedQuery>;
  /** Resolves when every observation so far is written and ranks. */
  flush(): Promise<void>;
  /** A tool's examples, newest first; `orgId` undefined: every scope (admins). */
  list(toolId: string, orgId?: string | null): Promise<LearnedExampleRow[]>;
  /** Deletes a tool's examples (all, or `ids`) in a scope or every scope; returns how many. */
  remove(toolId: string, options?: { orgId?: string | null | undefined; ids?: readonly string[] }): Promise<number>;
  /** Switches a tool's learning off or on, in one scope or every scope (`orgId` undefined). */
  setEnabled(toolId: string, enabled: boolean, orgId?: string | null): Promise<void>;
  /** Scopes in which the tool's learning is off (`null`: every scope). */
  blocks(toolId: string): Promise<(string | null)[]>;
  /** Learned example counts per tool id. */
  counts(orgId?: string | null): Promise<Map<string, number>>;
  /** Deletes examples older than the retention; returns the scopes touched. */
  sweep(): Promise<string[]>;
  stats(): LearningStats;
  close(): Promise<void>;
}

/** Creates the learning service. */
export function createLearning(options: LearningOptions): Learning {
  const settings: LearningSettings = { ...defaultLearningSettings, ...options.settings };
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? (() => new Date());
  const { db, embedder } = options;
  const counters = { observed: 0, learned: 0, errors: 0, transitions: 0, missesTaught: 0, skipped: {} as Partial<Record<SkipReason, number>> };

  // Overlay ranking constants; the queue's calibration fills in the floors before a task needs them.
  const scoring: OverlayScoring = {
    minSimilarity: typeof settings.minSimilarity === 'number' ? settings.minSimilarity : Number.NaN,
    weight: settings.weight,
    contributorShare: settings.contributorShare,
    lexicalWeight: settings.lexicalWeight,
    agreementShare: settings.agreementShare,
    agreementFloor: Number.NaN,
  };
  const queue = createCalibratedQueue({ embedder, settings, scoring, logger, onError: () => void counters.errors++ });
  const schedule = queue.schedule;
  const scopes = createScopeOverlays({ db, embedder, scoring, refreshMs: settings.refreshMs, now: () => clock().getTime(), logger, schedule, calibrated: queue.calibrated });
  const analysed = new Map<string, AnalysedQuery>();

  async function analyse(query: string): Promise<AnalysedQuery> {
    const cached = analysed.get(query);
    if (cached) return cached;
    const [vector] = await embedder.embed([query]);
    const result = { vector: vector!, terms: contentTerms(query) };
    if (analysed.size >= 512) analysed.delete(analysed.keys().next().value!);
    analysed.set(query, result);
    return result;
  }

  const captureDeps = { db, settings, clock, isQuarantined: options.isQuarantined };
  async function capture(observation: OutcomeObservation): Promise<void> {
    await queue.calibrated(); // following misses compares requests with the similarity floor
    const result = await captureObservation(captureDeps, observation);
    for (const reason of result.skipped) counters.skipped[reason] = (counters.skipped[reason] ?? 0) + 1;
    counters.learned += result.learned.length;
    if (result.learned.length > 0 && result.orgScope !== undefined) markChanged(result.orgScope, result.written, result.removed);
    if (result.learned.length > 0 && result.orgScope !== undefined && result.sessionKey !== undefined && result.contributor !== undefined) {
      await learnTransitions(result.orgScope, result.sessionKey, result.contributor, result.learned);
    }
    await followMisses(observation, result);
  }

  // Misses that teach (missed-requests.ts): a session's requests that called nothing wait in
  // memory for a later request of the session that teaches a tool; a call ends the episode.
  const misses = createMissedRequests();
  async function followMisses(observation: OutcomeObservation, result: CaptureResult): Promise<void> {
    if (result.orgScope === undefined || result.sessionKey === undefined) return;
    const key = `${result.orgScope}\u0000${result.sessionKey}`;
    if (result.missed) return misses.remember(key, result.missed);
    const earlier = misses.take(key, clock().getTime());
    if (earlier.length === 0 || result.learned.length === 0 || result.text === undefined) return;
    const found = await analyse(result.text);
    const foundKey = textKey(result.text);
    const related = [];
    // The same words again are a repeat, not a reformulation: that request already taught.
    for (const miss of earlier) if (miss.textKey !== foundKey && relatedRequests(await analyse(miss.text), found, scoring.minSimilarity)) related.push(miss);
    if (related.length === 0) return;
    const taught = await teachMissed(captureDeps, result, observation.source, related);
    counters.learned += taught.learned.length;
    counters.missesTaught += related.length;
    markChanged(result.orgScope, taught.written, taught.removed);
  }

  // "Called after" (called-after.ts): only the tools capture let learn take part.
  const transitions = createTransitionScopes({ db, now: () => clock().getTime(), perToolCap: settings.perToolCap });
  async function learnTransitions(orgScope: string, sessionKey: string, contributor: string, called: readonly string[]): Promise<void> {
    counters.transitions += await transitions.learn(orgScope, sessionKey, contributor, called);
  }
  const transitionLoads = new Set<string>();

  // Captures queued together update their scope once, after the last of them (in memory:
  // written rows in, trimmed ids out, only new texts embedded).
  const changes = new Map<string, { written: LearnedExampleRow[]; removed: Set<string> }>();
  let updateQueued = false;
  function markChanged(orgScope: string, written: readonly LearnedExampleRow[], removed: readonly string[]): void {
    const change = changes.get(orgScope) ?? { written: [], removed: new Set<string>() };
    for (const row of written) {
      change.written.push(row);
      change.removed.delete(row.id);
    }
    for (const id of removed) change.removed.add(id);
    changes.set(orgScope, change);
    if (updateQueued) return;
    updateQueued = true;
    schedule(async () => {
      updateQueued = false;
      const pending = [...changes];
      changes.clear();
      for (const [scope, change] of pending) await scopes.apply(scope, change.written.filter((row) => !change.removed.has(row.id)), change.removed);
    });
  }

  async function afterWrite(touched: Iterable<string>): Promise<void> {
    for (const orgScope of new Set(touched)) await scopes.reload(orgScope);
  }

  const sweepTimer =
    settings.sweepIntervalMs > 0 && settings.retentionDays > 0
      ? setInterval(() => schedule(async () => void (await sweep())), settings.sweepIntervalMs)
      : undefined;
  sweepTimer?.unref();

  async function sweep(): Promise<string[]> {
    if (settings.retentionDays <= 0) return [];
    const before = new Date(clock().getTime() - settings.retentionDays * 86_400_000);
    const touched = await deleteExpiredExamples(db, before);
    await afterWrite(touched);
    for (const orgScope of await deleteExpiredTransitions(db, before)) if (transitions.holds(orgScope)) await transitions.reload(orgScope);
    return touched;
  }

  return {
    settings,
    observe(observation) {
      counters.observed++;
      schedule(() => capture(observation));
    },
    overlayFor: (orgId) => scopes.current(orgScopeOf(orgId)),
    calledAfterFor(orgId) {
      const orgScope = orgScopeOf(orgId);
      const { overlay, stale } = transitions.current(orgScope, settings.refreshMs);
      if (stale && !transitionLoads.has(orgScope)) {
        transitionLoads.add(orgScope);
        schedule(async () => {
          try {
            await transitions.reload(orgScope);
          } catch (error) {
            logger.warn({ err: error, orgScope }, 'learning: could not load called-after transitions; ranking without them');
          } finally {
            transitionLoads.delete(orgScope);
          }
        });
      }
      return overlay;
    },
    analyseQuery: analyse,
    // Tasks may schedule more (a capture's reload): this waits until the queue stands still.
    flush: queue.flush,
    list: (toolId, orgId) => listLearnedExamples(db, { toolId, orgScope: orgId === undefined ? undefined : orgScopeOf(orgId) }),
    async remove(toolId, removeOptions = {}) {
      const orgScope = removeOptions.orgId === undefined ? undefined : orgScopeOf(removeOptions.orgId);
      const deleted = await deleteLearnedExamples(db, { toolId, orgScope, ids: removeOptions.ids });
      await afterWrite(deleted.map((row) => row.orgScope));
      return deleted.length;
    },
    async setEnabled(toolId, enabled, orgId) {
      const orgScope = orgId === undefined ? null : orgScopeOf(orgId);
      await setLearningBlocked(db, orgScope, toolId, !enabled);
      // A block hides the tool's examples and transitions from ranking: rebuild what is loaded.
      if (orgScope === null) await scopes.reloadAll();
      else await afterWrite([orgScope]);
      for (const held of transitions.held()) if (orgScope === null || held === orgScope) await transitions.reload(held);
    },
    blocks: (toolId) => learningBlocks(db, toolId),
    counts: (orgId) => countLearnedExamples(db, orgId === undefined ? undefined : orgScopeOf(orgId)),
    sweep,
    stats: () => ({
      ...counters,
      skipped: { ...counters.skipped },
      ...(({ scopes: n, examples }) => ({ scopes: n, examples }))(scopes.stats()),
      ...(Number.isNaN(scoring.minSimilarity) ? {} : { minSimilarity: scoring.minSimilarity }),
      ...(queue.calibration() ? { calibration: queue.calibration() } : {}),
      ...(queue.agreement() ? { agreement: queue.agreement() } : {}),
    }),
    async close() {
      if (sweepTimer) clearInterval(sweepTimer);
      await queue.flush();
    },
  };
}
