/**
 * @module catalog/visibility-conditions
 * The `conditions` of a visibility rule, one zod schema per rule type (seed 001 §5.1). Input
 * may use a singular shorthand; what is stored (and what an evaluator reads) is always the
 * normalised form below, so the selection pipeline has one shape to handle.
 *
 * | rule type   | accepted input                                              | stored (normalised)        |
 * |-------------|-------------------------------------------------------------|----------------------------|
 * | `org`       | `{orgIds: ["a","b"]}` or `{orgId: "a"}`                     | `{orgIds}`                 |
 * | `user`      | `{userIds: [...]}` or `{userId}`                            | `{userIds}`                |
 * | `page`      | `{pages: ["deals*", ...]}` or `{page}` (page patterns)      | `{pages}`                  |
 * | `role`      | `{roles: [...], rolesMatch?: "any"\|"all"}` or `{role}`     | `{roles, rolesMatch}`      |
 * | `tier`      | `{tier: "teams"}` or `{tier: {gte: "teams"}}`               | `{tier: {<op>: …}}`        |
 * | `composite` | any of the keys above together; all must hold (AND)         | the normalised keys        |
 *
 * A rule matches a request when its condition holds: the request's org is in `orgIds`, its user
 * in `userIds`, its page matches one of `pages` (the four page-pattern modes), it has any
 * (or all, per `rolesMatch`) of `roles`, and its tier satisfies every operator in `tier`.
 * Tier operators: `eq`, `ne`, `gt`, `gte`, `lt`, `lte` compare positions in `TIER_ORDER`;
 * `in` / `notIn` take lists. Unknown keys are rejected so a typo cannot silently widen a rule.
 */
import { z } from 'zod';
import { pagePatternSchema } from './page-pattern.ts';

/** Subscription tiers from lowest to highest (seed 001 §3.1); tier comparisons use this order. */
export const TIER_ORDER = ['open_source', 'shared_access', 'teams', 'dedicated_vps', 'government'] as const;
/** A subscription tier. */
export type Tier = (typeof TIER_ORDER)[number];

/** The six rule types (seed 001 §5.1). */
export const visibilityRuleTypeSchema = z.enum(['org', 'user', 'page', 'role', 'tier', 'composite']);
/** Allow or deny (seed 001 §4.2). */
export const visibilityEffectSchema = z.enum(['allow', 'deny']);

const tierSchema = z.enum(TIER_ORDER);
const identifier = z.string().min(1).max(200);
const identifierList = z.array(identifier).min(1).max(1_000);

/** A tier comparison: at least one operator; all given operators must hold. */
export const tierComparisonSchema = z
  .strictObject({
    eq: tierSchema.optional(),
    ne: tierSchema.optional(),
    gt: tierSchema.optional(),
    gte: tierSchema.optional(),
    lt: tierSchema.optional(),
    lte: tierSchema.optional(),
    in: z.array(tierSchema).min(1).optional(),
    notIn: z.array(tierSchema).min(1).optional(),
  })
  .refine((comparison) => Object.values(comparison).some((value) => value !== undefined), {
    message: 'a tier comparison needs at least one of eq, ne, gt, gte, lt, lte, in, notIn',
  });
/** A normalised tier comparison. */
export type TierComparison = z.output<typeof tierComparisonSchema>;

const tierCondition = z.union([tierSchema.transform((tier): TierComparison => ({ eq: tier })), tierComparisonSchema]);

/** The normalised conditions of any rule; which keys are present depends on the rule type. */
export interface VisibilityConditions {
  orgIds?: string[];
  userIds?: string[];
  pages?: string[];
  roles?: string[];
  rolesMatch?: 'any' | 'all';
  tier?: TierComparison;
}

// Every accepted key; singular shorthands fold into the plural lists.
const conditionKeysSchema = z.strictObject({
  orgIds: identifierList.optional(),
  orgId: identifier.optional(),
  userIds: identifierList.optional(),
  userId: identifier.optional(),
  pages: z.array(pagePatternSchema).min(1).max(1_000).optional(),
  page: pagePatternSchema.optional(),
  roles: identifierList.optional(),
  role: identifier.optional(),
  rolesMatch: z.enum(['any', 'all']).optional(),
  tier: tierCondition.optional(),
});
type ConditionKeys = z.output<typeof conditionKeysSchema>;
type ConditionKind = 'org' | 'user' | 'page' | 'role' | 'tier';

const KIND_KEYS: Record<ConditionKind, readonly (keyof ConditionKeys)[]> = {
  org: ['orgIds', 'orgId'],
  user: ['userIds', 'userId'],
  page: ['pages', 'page'],
  role: ['roles', 'role', 'rolesMatch'],
  tier: ['tier'],
};

function kindsPresent(keys: ConditionKeys): ConditionKind[] {
  return (Object.keys(KIND_KEYS) as ConditionKind[]).filter((kind) =>
    KIND_KEYS[kind].some((key) => key !== 'rolesMatch' && keys[key] !== undefined),
  );
}

function normalise(keys: ConditionKeys): VisibilityConditions {
  const out: VisibilityConditions = {};
  const list = (many: string[] | undefined, one: string | undefined) => [...new Set([...(many ?? []), ...(one === undefined ? [] : [one])])];
  if (keys.orgIds !== undefined || keys.orgId !== undefined) out.orgIds = list(keys.orgIds, keys.orgId);
  if (keys.userIds !== undefined || keys.userId !== undefined) out.userIds = list(keys.userIds, keys.userId);
  if (keys.pages !== undefined || keys.page !== undefined) out.pages = list(keys.pages, keys.page);
  if (keys.roles !== undefined || keys.role !== undefined) {
    out.roles = list(keys.roles, keys.role);
    out.rolesMatch = keys.rolesMatch ?? 'any';
  }
  if (keys.tier !== undefined) out.tier = keys.tier;
  return out;
}

/** The conditions schema of one rule type: exactly its own kind, or (composite) one or more kinds. */
function conditionsFor(ruleType: z.output<typeof visibilityRuleTypeSchema>) {
  return conditionKeysSchema
    .superRefine((keys, context) => {
      const kinds = kindsPresent(keys);
      if (keys.rolesMatch !== undefined && !kinds.includes('role')) {
        context.addIssue({ code: 'custom', path: ['rolesMatch'], message: 'rolesMatch needs roles or role' });
      }
      if (ruleType === 'composite') {
        if (kinds.length === 0) {
          context.addIssue({ code: 'custom', message: 'a composite rule needs at least one of orgIds, userIds, pages, roles, tier' });
        }
        return;
      }
      if (!kinds.includes(ruleType)) {
        context.addIssue({ code: 'custom', message: `a ${ruleType} rule needs ${KIND_KEYS[ruleType].filter((k) => k !== 'rolesMatch').join(' or ')}` });
      }
      for (const kind of kinds) {
        if (kind !== ruleType) {
          context.addIssue({ code: 'custom', message: `a ${ruleType} rule cannot have ${kind} conditions; use a composite rule` });
        }
      }
    })
    .transform(normalise);
}

/** One conditions schema per rule type; each parses input into `VisibilityConditions`. */
export const visibilityConditionsSchemas = {
  org: conditionsFor('org'),
  user: conditionsFor('user'),
  page: conditionsFor('page'),
  role: conditionsFor('role'),
  tier: conditionsFor('tier'),
  composite: conditionsFor('composite'),
} as const;
