/**
 * @module catalog/visibility-rules
 * Visibility rule CRUD (seed 001 §8.3). Each rule is validated against its type's conditions
 * schema (`visibility-conditions.ts`) and stored normalised; it targets at most one of a
 * tool, a category or a plugin (none: every tool). Evaluating rules is the selection
 * pipeline's job (seed 001 §5.1); this module only keeps them correct.
 */
import { z } from 'zod';
import { invalidInput, notFound } from '../core/errors.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import { findCategoryById } from '../store/repositories/categories.ts';
import { isForeignKeyViolation, isUuid } from '../store/repositories/mapping.ts';
import { findPluginById } from '../store/repositories/plugin-refs.ts';
import { findToolById } from '../store/repositories/tools.ts';
import {
  deleteVisibilityRule, findVisibilityRuleById, insertVisibilityRule, listVisibilityRules, updateVisibilityRule,
  type VisibilityRuleRecord, type VisibilityRuleWrite,
} from '../store/repositories/visibility-rules.ts';
import type { CatalogContext } from './context.ts';
import { uuidSchema, booleanFlag } from './schemas.ts';
import { visibilityConditionsSchemas, visibilityEffectSchema, visibilityRuleTypeSchema } from './visibility-conditions.ts';

const ruleFields = {
  ruleType: visibilityRuleTypeSchema,
  effect: visibilityEffectSchema,
  toolId: uuidSchema.nullable(),
  categoryId: uuidSchema.nullable(),
  pluginId: uuidSchema.nullable(),
  conditions: z.unknown(),
  priority: z.number().int().min(-1_000_000).max(1_000_000),
  isActive: z.boolean(),
  description: z.string().max(2_000),
};

/** Checks a whole rule and normalises its conditions; issues carry paths like `conditions.tier.gte`. */
const ruleSchema = z
  .strictObject(ruleFields)
  .superRefine((rule, context) => {
    const targets = [rule.toolId, rule.categoryId, rule.pluginId].filter((target) => target !== null);
    if (targets.length > 1) {
      context.addIssue({ code: 'custom', path: ['toolId'], message: 'a rule targets at most one of toolId, categoryId, pluginId (none: every tool)' });
    }
    const conditions = visibilityConditionsSchemas[rule.ruleType].safeParse(rule.conditions);
    if (!conditions.success) {
      for (const issue of conditions.error.issues) {
        context.addIssue({ code: 'custom', path: ['conditions', ...issue.path.map(String)], message: issue.message });
      }
    }
  })
  .transform((rule): VisibilityRuleWrite => ({
    ...rule,
    conditions: visibilityConditionsSchemas[rule.ruleType].parse(rule.conditions) as Record<string, unknown>,
  }));

/** Input of `createVisibilityRule`. */
export const createVisibilityRuleInputSchema = z.strictObject({
  ...ruleFields,
  toolId: ruleFields.toolId.optional(),
  categoryId: ruleFields.categoryId.optional(),
  pluginId: ruleFields.pluginId.optional(),
  priority: ruleFields.priority.default(0),
  isActive: ruleFields.isActive.default(true),
  description: ruleFields.description.default(''),
});
/** `createVisibilityRule` input. */
export type CreateVisibilityRuleInput = z.input<typeof createVisibilityRuleInputSchema>;

/** Input of `updateVisibilityRule`: any field; the merged rule is validated as a whole. */
export const visibilityRulePatchSchema = z.strictObject({
  ruleType: ruleFields.ruleType.optional(),
  effect: ruleFields.effect.optional(),
  toolId: ruleFields.toolId.optional(),
  categoryId: ruleFields.categoryId.optional(),
  pluginId: ruleFields.pluginId.optional(),
  conditions: ruleFields.conditions.optional(),
  priority: ruleFields.priority.optional(),
  isActive: ruleFields.isActive.optional(),
  description: ruleFields.description.optional(),
});
/** `updateVisibilityRule` input. */
export type VisibilityRulePatch = z.input<typeof visibilityRulePatchSchema>;

/** Filters of `listVisibilityRules`. */
export const visibilityRuleListQuerySchema = z.strictObject({
  includeInactive: booleanFlag.default(false),
  ruleType: visibilityRuleTypeSchema.optional(),
});
/** `listVisibilityRules` input. */
export type VisibilityRuleListQueryInput = z.input<typeof visibilityRuleListQuerySchema>;

/** The visibility-rule operations of the catalog service. */
export interface VisibilityRuleOperations {
  /** Creates a rule after validating its conditions for its type. */
  createVisibilityRule(input: CreateVisibilityRuleInput): Promise<VisibilityRuleRecord>;
  /** A rule by id. */
  getVisibilityRule(id: string): Promise<VisibilityRuleRecord>;
  /** Rules in evaluation order (priority descending, deny first at equal priority); active ones unless asked. */
  listVisibilityRules(query?: VisibilityRuleListQueryInput): Promise<VisibilityRuleRecord[]>;
  /** Patches a rule; the merged rule is validated again. */
  updateVisibilityRule(id: string, patch: VisibilityRulePatch): Promise<VisibilityRuleRecord>;
  /** Deletes a rule. */
  deleteVisibilityRule(id: string): Promise<void>;
}

async function requireRule(db: Queryable, id: string): Promise<VisibilityRuleRecord> {
  const rule = isUuid(id) ? await findVisibilityRuleById(db, id) : undefined;
  if (rule === undefined) throw notFound('visibility rule', id);
  return rule;
}

/** Throws `not_found` when the rule's target does not exist. */
async function assertTargetExists(db: Queryable, rule: VisibilityRuleWrite): Promise<void> {
  if (rule.toolId !== null && (await findToolById(db, rule.toolId)) === undefined) throw notFound('tool', rule.toolId);
  if (rule.categoryId !== null && (await findCategoryById(db, rule.categoryId)) === undefined) throw notFound('category', rule.categoryId);
  if (rule.pluginId !== null && (await findPluginById(db, rule.pluginId)) === undefined) throw notFound('plugin', rule.pluginId);
}

/** Runs a write, turning a target deleted meanwhile (foreign-key violation) into `not_found`. */
async function targetMustExist<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isForeignKeyViolation(error)) throw invalidInput('the rule target no longer exists', { cause: String(error) });
    throw error;
  }
}

/** Builds the visibility-rule operations over the shared context. */
export function createVisibilityRuleOperations(context: CatalogContext): VisibilityRuleOperations {
  const { db } = context;

  return {
    async createVisibilityRule(raw) {
      const input = parseOrThrow(createVisibilityRuleInputSchema, raw, 'visibility rule');
      const rule = parseOrThrow(ruleSchema, {
        ...input,
        toolId: input.toolId ?? null,
        categoryId: input.categoryId ?? null,
        pluginId: input.pluginId ?? null,
      }, 'visibility rule');
      const created = await db.transaction(async (tx) => {
        await assertTargetExists(tx, rule);
        const id = await targetMustExist(() => insertVisibilityRule(tx, rule, context.now()));
        return (await findVisibilityRuleById(tx, id))!;
      });
      context.emit({ kind: 'rules', ids: [created.id] });
      return created;
    },

    async getVisibilityRule(id) {
      return requireRule(db, id);
    },

    async listVisibilityRules(raw = {}) {
      const query = parseOrThrow(visibilityRuleListQuerySchema, raw, 'visibility rule query');
      return listVisibilityRules(db, query);
    },

    async updateVisibilityRule(id, raw) {
      const patch = parseOrThrow(visibilityRulePatchSchema, raw, 'visibility rule patch');
      const updated = await db.transaction(async (tx) => {
        const current = await requireRule(tx, id);
        const { id: _id, createdAt: _created, updatedAt: _updated, ...stored } = current;
        const merged: Record<string, unknown> = { ...stored };
        for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value;
        const rule = parseOrThrow(ruleSchema, merged, 'visibility rule');
        await assertTargetExists(tx, rule);
        await targetMustExist(() => updateVisibilityRule(tx, current.id, rule, context.now()));
        return (await findVisibilityRuleById(tx, current.id))!;
      });
      context.emit({ kind: 'rules', ids: [updated.id] });
      return updated;
    },

    async deleteVisibilityRule(id) {
      const rule = await requireRule(db, id);
      if (!(await deleteVisibilityRule(db, rule.id))) throw notFound('visibility rule', id);
      context.emit({ kind: 'rules', ids: [rule.id] });
    },
  };
}
