import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { banditContextKey, contextOutcomes, thompsonRerank, type BanditArm, type RankedCandidate } from './bandit.ts';
import { createSampler } from './sampler.ts';
import { createSeededRandom } from './random.ts';

const ranked: RankedCandidate[] = Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, score: 20 - i }));

describe('bandit', () => {
  it('builds the seed context key', () => {
    assert.equal(banditContextKey({ tier: 'shared_access', page: 'contacts' }), 'shared_access:contacts:general');
    assert.equal(banditContextKey({}), 'any:any:general');
  });

  it('puts the organisation in the key, encoded so a page cannot make two organisations share one', () => {
    assert.equal(banditContextKey({ orgId: 'acme', tier: 'teams', page: 'deals' }), 'teams:deals:general:org=acme');
    assert.equal(banditContextKey({ orgId: null, page: 'deals' }), 'any:deals:general', 'no organisation: the seed key, so old rows stay readable');
    assert.equal(banditContextKey({ orgId: 'a:b' }), 'any:any:general:org=a%3Ab');
    // A crafted page naming another organisation still ends with the caller's own.
    const crafted = banditContextKey({ orgId: 'acme', page: 'x:general:org=globex' });
    assert.notEqual(crafted, banditContextKey({ orgId: 'globex', page: 'x' }));
    assert.ok(crafted.endsWith(':org=acme'));
    assert.notEqual(banditContextKey({ page: 'x:general:org=globex' }), banditContextKey({ orgId: 'globex', page: 'x' }));
  });

  it('returns k tools from the top 2k pool with exactly one exploration slot', () => {
    const sampler = createSampler(createSeededRandom(5));
    for (let round = 0; round < 200; round++) {
      const picks = thompsonRerank(ranked, { k: 7, sampler, arm: () => undefined });
      assert.equal(picks.length, 7);
      assert.equal(new Set(picks.map((p) => p.id)).size, 7);
      assert.equal(picks.filter((p) => p.reason === 'exploration').length, 1);
      for (const pick of picks) assert.ok(Number(pick.id.slice(1)) < 14, `pick ${pick.id} outside the pool`);
    }
  });

  it('follows retrieval when cold: the most relevant tool is nearly always kept', () => {
    const sampler = createSampler(createSeededRandom(6));
    let topKept = 0;
    let topFirst = 0;
    for (let round = 0; round < 1_000; round++) {
      const picks = thompsonRerank(ranked, { k: 7, sampler, arm: () => undefined });
      if (picks.some((p) => p.id === 't0')) topKept++;
      if (picks[0]!.id === 't0') topFirst++;
    }
    // Beta(9, 1) for the top tool: it falls out of the exploitation set a few % of the time (that is the exploration).
    assert.ok(topKept > 940, `top tool kept ${topKept}/1000`);
    assert.ok(topFirst > 300, `top tool first ${topFirst}/1000`);
  });

  it('promotes a tool that succeeds and demotes one that fails', () => {
    const sampler = createSampler(createSeededRandom(7));
    const arms = new Map<string, BanditArm>([
      ['t5', { alpha: 80, beta: 2 }],
      ['t0', { alpha: 2, beta: 80 }],
    ]);
    const count = (arm: (id: string) => BanditArm | undefined) => {
      let t5Top4 = 0;
      let t0Exploited = 0;
      for (let round = 0; round < 500; round++) {
        const picks = thompsonRerank(ranked, { k: 7, sampler, arm });
        if (picks.slice(0, 4).some((p) => p.id === 't5')) t5Top4++;
        if (picks.some((p) => p.id === 't0' && p.reason === 'retrieved')) t0Exploited++;
      }
      return { t5Top4, t0Exploited };
    };
    const cold = count(() => undefined);
    const warm = count((id) => arms.get(id));
    // t5 (relevance 0.75) with 80 successes ranks as (1 + 0.75) / 2 ≈ 0.87 at most: above the cold
    // t3 (0.85) and t4, never above t1 or t2: success moves a tool by at most half the relevance scale.
    assert.ok(cold.t5Top4 === 0 && warm.t5Top4 > 400, `successful tool in the first four: cold ${cold.t5Top4}, warm ${warm.t5Top4}`);
    assert.ok(cold.t0Exploited > 450 && warm.t0Exploited < 25, `failing tool exploited: cold ${cold.t0Exploited}, warm ${warm.t0Exploited}`);
  });

  it("measures an arm against its context's rate: where every call succeeds, success alone pulls nothing up (issue #25)", () => {
    // A context where calls nearly always succeed (the replay's, and most organisations'): 300
    // successes over 40 tools, none failed. t3 (relevance 0.85) was called 3 times, for other
    // requests or on noisy credit; t0–t2 are more relevant and untried in this pool.
    const others = Array.from({ length: 40 }, (_, i) => ({ alpha: 8.5, beta: 1, id: `o${i}` }));
    const arms = new Map<string, BanditArm>([['t3', { alpha: 4, beta: 1 }], ...others.map((o) => [o.id, { alpha: o.alpha, beta: o.beta }] as [string, BanditArm])]);
    const context = contextOutcomes(arms.values());
    assert.deepEqual(context, { successes: 303, failures: 0 });
    const firstFour = (withContext: boolean) => {
      const sampler = createSampler(createSeededRandom(11));
      let ahead = 0;
      for (let round = 0; round < 500; round++) {
        const picks = thompsonRerank(ranked, { k: 7, sampler, arm: (id) => arms.get(id), ...(withContext ? { context } : {}) });
        if (picks.findIndex((p) => p.id === 't3') < picks.findIndex((p) => p.id === 't2')) ahead++;
      }
      return ahead;
    };
    // Against ½ (no context given), three successes look better than an untried tool's prior.
    const againstHalf = firstFour(false);
    const againstContext = firstFour(true);
    assert.ok(againstHalf > 250 && againstContext === 0, `t3 above the more relevant t2: against ½ ${againstHalf}/500, against the context ${againstContext}/500`);
    // Where calls fail, the same three successes still count (the engine's learning test, end to end).
    const failing = new Map<string, BanditArm>([['t3', { alpha: 4, beta: 1 }], ...others.map((o) => [o.id, { alpha: 2, beta: 8 }] as [string, BanditArm])]);
    const sampler = createSampler(createSeededRandom(12));
    let ahead = 0;
    for (let round = 0; round < 500; round++) {
      const picks = thompsonRerank(ranked, { k: 7, sampler, arm: (id) => failing.get(id), context: contextOutcomes(failing.values()) });
      if (picks.findIndex((p) => p.id === 't3') < picks.findIndex((p) => p.id === 't2')) ahead++;
    }
    assert.ok(ahead > 250, `t3 above t2 where other calls fail: ${ahead}/500`);
  });

  it('ranks cold tools by relevance alone: no draw reorders them (issue #25)', () => {
    const sampler = createSampler(createSeededRandom(11));
    for (let round = 0; round < 200; round++) {
      const picks = thompsonRerank(ranked, { k: 7, sampler, arm: () => undefined });
      assert.deepEqual(
        picks.filter((p) => p.reason === 'retrieved').map((p) => p.id),
        ['t0', 't1', 't2', 't3', 't4', 't5'],
      );
    }
  });

  it('draws only what an arm has observed: the spread shrinks with evidence', () => {
    const sampler = createSampler(createSeededRandom(12));
    const spread = (arm: BanditArm) => {
      const samples = Array.from({ length: 400 }, () => thompsonRerank(ranked.slice(0, 3), { k: 3, sampler, arm: (id) => (id === 't1' ? arm : undefined), exploration: false }).find((p) => p.id === 't1')!.sample);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      return Math.sqrt(samples.reduce((a, b) => a + (b - mean) ** 2, 0) / samples.length);
    };
    const none = spread({ alpha: 1, beta: 1 });
    const few = spread({ alpha: 3, beta: 2 });
    const many = spread({ alpha: 240, beta: 160 });
    assert.ok(none < 1e-9, 'no observations: ranked by relevance, not drawn');
    assert.ok(few > 2 * many && many > 0, `spread with 3 observations ${few.toFixed(4)}, with 398 ${many.toFixed(4)}`);
  });

  it('does not give the exploration slot to a tool because it is often called (issue #25)', () => {
    const sampler = createSampler(createSeededRandom(13));
    // t13 (relevance 0.35, the pool's least relevant) was called 59 times for other requests.
    const arms = new Map<string, BanditArm>([['t13', { alpha: 60, beta: 1 }]]);
    let popular = 0;
    for (let round = 0; round < 500; round++) {
      const explored = thompsonRerank(ranked, { k: 7, sampler, arm: (id) => arms.get(id) }).find((p) => p.reason === 'exploration');
      if (explored?.id === 't13') popular++;
    }
    // Pool t0…t13, exploitation t0…t5, so the slot is drawn among t6…t13 (eight tools).
    assert.ok(popular < 100, `often-called tool explored ${popular}/500`);
  });

  it('uses the exploration slot for untried tools more than for known failures', () => {
    const sampler = createSampler(createSeededRandom(8));
    const arms = new Map<string, BanditArm>();
    for (let i = 0; i < 6; i++) arms.set(`t${i}`, { alpha: 60, beta: 1 });
    for (let i = 6; i < 14; i++) arms.set(`t${i}`, i === 13 ? { alpha: 1, beta: 1 } : { alpha: 1, beta: 30 });
    let untried = 0;
    for (let round = 0; round < 500; round++) {
      const explored = thompsonRerank(ranked, { k: 7, sampler, arm: (id) => arms.get(id), relevanceStrength: 0 }).find((p) => p.reason === 'exploration');
      if (explored?.id === 't13') untried++;
    }
    assert.ok(untried > 300, `untried tool explored ${untried}/500`);
  });

  it('handles small pools, k = 1, no exploration and bad stats', () => {
    const sampler = createSampler(createSeededRandom(9));
    assert.deepEqual(thompsonRerank([], { k: 7, sampler, arm: () => undefined }), []);
    const few = thompsonRerank(ranked.slice(0, 3), { k: 7, sampler, arm: () => undefined });
    assert.equal(few.length, 3);
    assert.ok(few.every((p) => p.reason === 'retrieved'));
    assert.equal(thompsonRerank(ranked, { k: 1, sampler, arm: () => undefined }).length, 1);
    assert.ok(thompsonRerank(ranked, { k: 5, sampler, arm: () => undefined, exploration: false }).every((p) => p.reason === 'retrieved'));
    const broken = thompsonRerank(ranked, { k: 3, sampler, arm: () => ({ alpha: Number.NaN, beta: -1 }) });
    assert.equal(broken.length, 3);
  });

  it('is reproducible with a seeded sampler', () => {
    const a = thompsonRerank(ranked, { k: 7, sampler: createSampler(createSeededRandom(1)), arm: () => undefined });
    const b = thompsonRerank(ranked, { k: 7, sampler: createSampler(createSeededRandom(1)), arm: () => undefined });
    assert.deepEqual(a, b);
  });
});
