/**
 * @module selection/policy
 * Stage 1 of the pipeline (seed 001 §5.1): which tools a request may see, decided by the
 * visibility rules. Pure: the rules come in as data, the answer goes out as a predicate.
 *
 * Semantics (docs/selection.md, "Policy"):
 * - A rule **targets** a tool when every target column it sets matches (tool id, category id,
 *   plugin id); a rule with none set targets every tool.
 * - A rule **applies** to a request when its conditions hold. The conditions are the
 *   catalog's normalised form (`orgIds`, `userIds`, `pages`, `roles` + `rolesMatch`,
 *   `tier: {eq|ne|gt|gte|lt|lte|in|notIn}`) or its singular shorthands; several kinds
 *   together are ANDed (composite). Empty conditions apply to every request.
 * - For each tool, the applying rules that target it are taken in priority order (highest
 *   first); the first one decides, and at equal priority a deny beats an allow (LaunchDarkly
 *   style, seed 001 §4.2). No applying rule: the tool is visible.
 * - Fail closed (DESIGN §3.4, deviating from seed §5.1's "allow all" on error): a condition
 *   that cannot be decided (the request lacks the tier a comparison needs, a tier outside the
 *   known order, no user for a user rule…) is *unknown*; an unknown condition makes a deny
 *   rule apply and an allow rule not apply. A malformed rule (unreadable conditions, an
 *   unknown effect or rule type) is a deny on its target when its effect is not `allow`, and
 *   is ignored when it is `allow`: a broken rule can hide tools, never reveal them.
 */
import { z } from 'zod';
import { matchesPagePattern, pagePatternProblem } from '../catalog/page-pattern.ts';

/** Seed 001 §3.1 subscription tiers, lowest first; ordered comparisons use this order. */
export const DEFAULT_TIER_ORDER: readonly string[] = ['open_source', 'shared_access', 'teams', 'dedicated_vps', 'government'];

/** What a rule is evaluated against. `undefined` means the request did not say. */
export interface PolicyContext {
  orgId?: string | null | undefined;
  userId?: string | null | undefined;
  roles?: readonly string[] | null | undefined;
  tier?: string | null | undefined;
  page?: string | null | undefined;
}

/** A visibility rule as stored (the repository's `VisibilityRuleRecord` fits). */
export interface PolicyRule {
  id: string;
  ruleType: string;
  effect: string;
  toolId: string | null;
  categoryId: string | null;
  pluginId: string | null;
  conditions: unknown;
  priority: number;
  isActive?: boolean;
}

/** The identity of a tool a rule can target. */
export interface PolicyTarget {
  id: string;
  categoryId: string | null;
  pluginId: string | null;
}

/** A rule that applies to the request, reduced to what targeting needs. */
interface AppliedRule {
  id: string;
  deny: boolean;
  priority: number;
  toolId: string | null;
  categoryId: string | null;
  pluginId: string | null;
}

/** The policy for one request context. */
export interface CompiledPolicy {
  /** True when the tool is visible. */
  allows(tool: PolicyTarget): boolean;
  /** Ids of the rules that apply to this context, in evaluation order. */
  readonly appliedRuleIds: readonly string[];
  /** Ids of rules that could not be read (each treated per the fail-closed rule above). */
  readonly malformedRuleIds: readonly string[];
  /** True when no rule applies: every tool is visible and filtering can be skipped. */
  readonly allowsEverything: boolean;
}

/** Tri-state truth: a condition can be true, false, or undecidable for this request. */
export type Truth = true | false | 'unknown';

const RULE_TYPES = new Set(['org', 'user', 'page', 'role', 'tier', 'composite']);
const identifier = z.string().min(1).max(200);
const tierName = z.string().min(1).max(100);

/** A tier comparison: any tier names (unknown ones are handled at evaluation), at least one operator. */
const tierComparisonSchema = z
  .strictObject({
    eq: tierName.optional(),
    ne: tierName.optional(),
    gt: tierName.optional(),
    gte: tierName.optional(),
    lt: tierName.optional(),
    lte: tierName.optional(),
    in: z.array(tierName).min(1).optional(),
    notIn: z.array(tierName).min(1).optional(),
  })
  .refine((comparison) => Object.values(comparison).some((value) => value !== undefined), 'empty tier comparison');
type TierComparison = z.output<typeof tierComparisonSchema>;

const pagePattern = z.string().max(500).refine((pattern) => pagePatternProblem(pattern) === undefined, 'invalid page pattern');

/** Every key the catalog accepts (normalised and shorthand); anything else makes a rule malformed. */
const conditionsSchema = z.strictObject({
  orgIds: z.array(identifier).min(1).optional(),
  orgId: identifier.optional(),
  userIds: z.array(identifier).min(1).optional(),
  userId: identifier.optional(),
  pages: z.array(pagePattern).min(1).optional(),
  page: pagePattern.optional(),
  roles: z.array(identifier).min(1).optional(),
  role: identifier.optional(),
  rolesMatch: z.enum(['any', 'all']).optional(),
  tier: z.union([tierName.transform((tier): TierComparison => ({ eq: tier })), tierComparisonSchema]).optional(),
});

/** Conditions in one shape, ready to evaluate. */
export interface ParsedConditions {
  orgIds?: string[];
  userIds?: string[];
  pages?: string[];
  roles?: string[];
  rolesMatch: 'any' | 'all';
  tier?: TierComparison;
}

function merge(many: string[] | undefined, one: string | undefined): string[] | undefined {
  if (many === undefined && one === undefined) return undefined;
  return [...new Set([...(many ?? []), ...(one === undefined ? [] : [one])])];
}

/** Parses stored conditions; undefined when they are malformed. */
export function parseConditions(conditions: unknown): ParsedConditions | undefined {
  const parsed = conditionsSchema.safeParse(conditions ?? {});
  if (!parsed.success) return undefined;
  const c = parsed.data;
  if (c.rolesMatch !== undefined && c.roles === undefined && c.role === undefined) return undefined;
  const out: ParsedConditions = { rolesMatch: c.rolesMatch ?? 'any' };
  const orgIds = merge(c.orgIds, c.orgId);
  const userIds = merge(c.userIds, c.userId);
  const pages = merge(c.pages, c.page);
  const roles = merge(c.roles, c.role);
  if (orgIds) out.orgIds = orgIds;
  if (userIds) out.userIds = userIds;
  if (pages) out.pages = pages;
  if (roles) out.roles = roles;
  if (c.tier) out.tier = c.tier;
  return out;
}

/** Kleene AND: false dominates, then unknown. */
function and(values: readonly Truth[]): Truth {
  let unknown = false;
  for (const value of values) {
    if (value === false) return false;
    if (value === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : true;
}

/** Evaluates a tier comparison; ordered operators need both tiers in `order`, else unknown. */
export function evaluateTier(comparison: TierComparison, tier: string | null | undefined, order: readonly string[]): Truth {
  if (tier === undefined || tier === null || tier === '') return 'unknown';
  const results: Truth[] = [];
  if (comparison.eq !== undefined) results.push(tier === comparison.eq);
  if (comparison.ne !== undefined) results.push(tier !== comparison.ne);
  if (comparison.in !== undefined) results.push(comparison.in.includes(tier));
  if (comparison.notIn !== undefined) results.push(!comparison.notIn.includes(tier));
  const position = order.indexOf(tier);
  const ordered: Array<[string | undefined, (a: number, b: number) => boolean]> = [
    [comparison.gt, (a, b) => a > b],
    [comparison.gte, (a, b) => a >= b],
    [comparison.lt, (a, b) => a < b],
    [comparison.lte, (a, b) => a <= b],
  ];
  for (const [operand, compare] of ordered) {
    if (operand === undefined) continue;
    const target = order.indexOf(operand);
    results.push(position < 0 || target < 0 ? 'unknown' : compare(position, target));
  }
  return and(results);
}

/** Evaluates parsed conditions against a context (tri-state). */
export function evaluateConditions(conditions: ParsedConditions, context: PolicyContext, tierOrder: readonly string[] = DEFAULT_TIER_ORDER): Truth {
  const results: Truth[] = [];
  const known = (value: string | null | undefined): value is string => value !== undefined && value !== null && value !== '';
  if (conditions.orgIds) results.push(known(context.orgId) ? conditions.orgIds.includes(context.orgId) : 'unknown');
  if (conditions.userIds) results.push(known(context.userId) ? conditions.userIds.includes(context.userId) : 'unknown');
  if (conditions.pages) {
    const page = context.page;
    results.push(known(page) ? conditions.pages.some((pattern) => matchesPagePattern(pattern, page)) : 'unknown');
  }
  if (conditions.roles) {
    const roles = context.roles;
    if (roles === undefined || roles === null) results.push('unknown');
    else if (conditions.rolesMatch === 'all') results.push(conditions.roles.every((role) => roles.includes(role)));
    else results.push(conditions.roles.some((role) => roles.includes(role)));
  }
  if (conditions.tier) results.push(evaluateTier(conditions.tier, context.tier, tierOrder));
  return and(results);
}

function targets(rule: AppliedRule, tool: PolicyTarget): boolean {
  return (
    (rule.toolId === null || rule.toolId === tool.id) &&
    (rule.categoryId === null || rule.categoryId === tool.categoryId) &&
    (rule.pluginId === null || rule.pluginId === tool.pluginId)
  );
}

/**
 * Compiles the rules for one request context into a visibility predicate. Inactive rules
 * are skipped; see the module comment for the evaluation and fail-closed semantics.
 */
export function compilePolicy(
  rules: readonly PolicyRule[],
  context: PolicyContext,
  options: { tierOrder?: readonly string[] } = {},
): CompiledPolicy {
  const tierOrder = options.tierOrder ?? DEFAULT_TIER_ORDER;
  const applied: AppliedRule[] = [];
  const malformed: string[] = [];
  for (const rule of rules) {
    if (rule.isActive === false) continue;
    const target = { id: rule.id, priority: Number.isFinite(rule.priority) ? rule.priority : 0, toolId: rule.toolId, categoryId: rule.categoryId, pluginId: rule.pluginId };
    const effectKnown = rule.effect === 'allow' || rule.effect === 'deny';
    const conditions = parseConditions(rule.conditions);
    if (!effectKnown || !RULE_TYPES.has(rule.ruleType) || conditions === undefined) {
      malformed.push(rule.id);
      // A broken allow reveals nothing; anything else hides its target (fail closed).
      if (rule.effect !== 'allow') applied.push({ ...target, deny: true });
      continue;
    }
    const truth = evaluateConditions(conditions, context, tierOrder);
    const deny = rule.effect === 'deny';
    if (truth === true || (truth === 'unknown' && deny)) applied.push({ ...target, deny });
  }
  // First match decides: priority descending, deny before allow at equal priority.
  applied.sort((a, b) => b.priority - a.priority || Number(b.deny) - Number(a.deny) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const allowsEverything = applied.every((rule) => !rule.deny);
  return {
    appliedRuleIds: applied.map((rule) => rule.id),
    malformedRuleIds: malformed,
    allowsEverything,
    allows(tool) {
      if (allowsEverything) return true;
      for (const rule of applied) if (targets(rule, tool)) return !rule.deny;
      return true;
    },
  };
}

/** The policy cache key (seed 001 §4.3 `${orgId}:${tier}`, extended by every attribute a rule can read). */
export function policyCacheKey(context: PolicyContext): string {
  const roles = context.roles === undefined || context.roles === null ? '~' : JSON.stringify([...context.roles].sort());
  const part = (value: string | null | undefined) => (value === undefined || value === null ? '~' : JSON.stringify(value));
  return `${part(context.orgId)}:${part(context.tier)}:${part(context.userId)}:${roles}:${part(context.page)}`;
}
