/**
 * @module selection/replay/replay
 * `quiver eval --replay` (issue #13): a labelled query stream replayed IN ORDER through the
 * real selection path: the catalog enters through plugin sync (as a plugin registers its
 * tools), each query is a logged `selectTools` of the engine, and its simulated outcome goes
 * back through `queueOutcome` (the MCP gateway's path, which feeds the bandit and whatever
 * else observes outcomes), flushed before the next query so every interaction sees the ones
 * before it. Nothing here ranks or learns by itself: the metrics move only if the product does.
 */
import type { CatalogService } from '../../catalog/index.ts';
import type { RetrievalDocument } from '../../retrieval/document.ts';
import type { EvalQuery } from '../../retrieval/eval/load.ts';
import { createSeededRandom } from '../random.ts';
import type { SelectionEngine } from '../engine.ts';
import { simulateOutcome } from './simulated-outcome.ts';
import { scoreInteraction, summarizeWindow, windowsOf, type ReplayWindow, type ScoredInteraction } from './windows.ts';

/** The plugin the replayed catalog is registered as. */
export const REPLAY_PLUGIN = 'replay-bench';

/** Largest description the catalog takes (core/tool.ts). */
const maximumDescription = 20_000;

/** Settings of one replay. */
export interface ReplaySettings {
  /** Tools offered per selection (the model sees these). */
  k: number;
  /** Interactions per reported window. */
  window: number;
  /** Share of outcomes credited to a wrong offered tool. */
  noise: number;
  /** Seed of the outcome simulation. */
  seed: number;
  /** The organisation the stream runs as (bandit context and learned-example scope). */
  orgId: string;
  /** Report outcomes (default true); false gives the static ranking to compare against. */
  feedback?: boolean;
  /** Replay in a seeded random order instead of the file's (windows then hold like queries). */
  shuffle?: boolean;
  /**
   * A simulated model offered nothing it calls searches again in the same session, for 2k
   * tools, and calls the gold tools among them (no noise on the retry). Scored on the first
   * search; what the retry teaches reaches later requests.
   */
  retryOnMiss?: boolean;
}

/** What a replay reports. */
export interface ReplayReport {
  tools: number;
  queries: number;
  k: number;
  window: number;
  noise: number;
  seed: number;
  orgId: string;
  cold: boolean;
  feedback: boolean;
  shuffled: boolean;
  retryOnMiss: boolean;
  windows: ReplayWindow[];
  overall: ReplayWindow;
  /** The multi-tool requests alone (absent when the stream has none): where plan steps and "called after" act. */
  multiTool?: ReplayWindow;
  durationMs: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A tool name the catalog accepts, derived from a bench id (unique within the plugin). */
function toolNameOf(id: string, taken: Set<string>): string {
  const base = id.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/_{2,}/g, '_').slice(0, 120) || 'tool';
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}.${n}`;
  taken.add(name);
  return name;
}

/**
 * Registers the bench tools as one plugin through catalog sync. `cold` leaves out the written
 * example queries (the cold start). The catalog has no free extra-text field, so a
 * tool's other text (MetaTool's model-facing description) follows its description. Returns
 * tool name → bench id.
 */
export async function loadReplayCatalog(catalog: Pick<CatalogService, 'syncPlugin'>, documents: readonly RetrievalDocument[], options: { cold: boolean }): Promise<Map<string, string>> {
  const taken = new Set<string>();
  const benchIdOf = new Map<string, string>();
  const tools = documents.map((document) => {
    const name = toolNameOf(document.id, taken);
    benchIdOf.set(name, document.id);
    const description = [document.description, ...(document.extraText ?? [])].filter(Boolean).join('\n').slice(0, maximumDescription);
    const examples = options.cold ? [] : (document.exampleQueries ?? []).map((q) => q.slice(0, 2_000)).slice(0, 500);
    const parameters = isObject(document.parameters) ? { parameters: document.parameters } : {};
    return { name, description, ...parameters, exampleQueries: examples };
  });
  await catalog.syncPlugin({ pluginId: REPLAY_PLUGIN, version: '1.0.0', tools });
  return benchIdOf;
}

/** A seeded Fisher-Yates shuffle (a copy). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

type ReplayEngine = Pick<SelectionEngine, 'selectTools' | 'queueOutcome' | 'flush'>;

/** One simulated search of the interaction's session: what it offered (bench ids, pins left out) and its event. */
async function search(engine: ReplayEngine, query: EvalQuery, index: number, k: number, input: { settings: ReplaySettings; benchIdOf: ReadonlyMap<string, string> }) {
  // Each query is its own session and user: a stream of different people, so per-contributor
  // caps see what they would in production, not one user asking 1,700 questions.
  const result = await engine.selectTools({
    query: query.query,
    k,
    context: { orgId: input.settings.orgId, sessionId: `replay-session-${index}`, userId: `replay-user-${index}` },
  });
  const offered = result.tools.filter((tool) => tool.reason !== 'pinned');
  const ids = offered.map((tool) => input.benchIdOf.get(tool.name) ?? `unknown:${tool.qualifiedName}`);
  const report = (called: readonly string[], success: boolean) => {
    if (result.metadata.eventId === undefined) return;
    engine.queueOutcome(result.metadata.eventId, { toolsCalled: called.map((id) => offered[ids.indexOf(id)]!.qualifiedName), success });
  };
  return { ids, report };
}

/** One interaction: select, score, report the simulated outcome (and a retry's), wait until it has landed. */
async function interact(
  engine: ReplayEngine,
  query: EvalQuery,
  index: number,
  input: { settings: ReplaySettings; benchIdOf: ReadonlyMap<string, string>; random: () => number; settle?: (() => Promise<void>) | undefined },
): Promise<ScoredInteraction> {
  const { settings } = input;
  const first = await search(engine, query, index, settings.k, input);
  const outcome = simulateOutcome(first.ids, query.items, { k: settings.k, noise: settings.noise, random: input.random });
  if (settings.feedback !== false) {
    first.report(outcome.called, outcome.success);
    if (settings.retryOnMiss === true && outcome.called.length === 0) {
      // The model found nothing it could use and asks again (the gateway reports the first search's empty outcome at this one).
      const again = await search(engine, query, index, 2 * settings.k, input);
      const retried = simulateOutcome(again.ids, query.items, { k: 2 * settings.k, noise: 0, random: input.random });
      again.report(retried.called, retried.success);
    }
    await engine.flush();
    await input.settle?.();
  }
  return scoreInteraction(first.ids, query.items, { calledGold: outcome.called.length > 0 && !outcome.noisy, noisy: outcome.noisy });
}

/**
 * Replays `queries` in order against `engine` (its catalog loaded with `loadReplayCatalog`).
 * `settle` runs after each outcome is written (e.g. until learned examples are indexed), so
 * windows do not depend on timing. `onWindow` hears each window as it completes.
 */
export async function runReplay(input: {
  engine: ReplayEngine;
  queries: readonly EvalQuery[];
  benchIdOf: ReadonlyMap<string, string>;
  settings: ReplaySettings;
  cold: boolean;
  settle?: () => Promise<void>;
  onWindow?: (window: ReplayWindow) => void;
}): Promise<ReplayReport> {
  const started = performance.now();
  const { settings } = input;
  const random = createSeededRandom(settings.seed);
  const queries = settings.shuffle === true ? shuffled(input.queries, createSeededRandom(settings.seed ^ 0x5bd1e995)) : input.queries;
  const scored: ScoredInteraction[] = [];
  for (const [index, query] of queries.entries()) {
    scored.push(await interact(input.engine, query, index, { settings, benchIdOf: input.benchIdOf, random, settle: input.settle }));
    if (scored.length % settings.window === 0) input.onWindow?.(summarizeWindow(scored.slice(-settings.window), scored.length - settings.window + 1));
  }
  // Every selection's event is a row before the report (a run without feedback queued them only).
  await input.engine.flush();
  return {
    tools: input.benchIdOf.size,
    queries: input.queries.length,
    k: settings.k,
    window: settings.window,
    noise: settings.noise,
    seed: settings.seed,
    orgId: settings.orgId,
    cold: input.cold,
    feedback: settings.feedback !== false,
    shuffled: settings.shuffle === true,
    retryOnMiss: settings.retryOnMiss === true,
    windows: windowsOf(scored, settings.window),
    overall: summarizeWindow(scored, 1),
    ...(scored.some((s) => s.multi) ? { multiTool: summarizeWindow(scored.filter((s) => s.multi), 1) } : {}),
    durationMs: Math.round(performance.now() - started),
  };
}
