/**
 * @module store/repositories/visibility-rules
 * Visibility rules (seed 001 §4.2, table 4; §5.1). A rule targets one tool, category or plugin,
 * or every tool when all three are NULL. `conditions` is stored as validated by the catalog
 * (`visibility-conditions.ts`); this module does not interpret it.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate } from './mapping.ts';

/** The six rule types of seed 001 §5.1. */
export type VisibilityRuleType = 'org' | 'user' | 'page' | 'role' | 'tier' | 'composite';
/** Allow or deny; deny wins at equal priority (seed 001 §4.2). */
export type VisibilityEffect = 'allow' | 'deny';

/** A stored visibility rule. */
export interface VisibilityRuleRecord {
  id: string;
  ruleType: VisibilityRuleType;
  effect: VisibilityEffect;
  toolId: string | null;
  categoryId: string | null;
  pluginId: string | null;
  conditions: Record<string, unknown>;
  priority: number;
  isActive: boolean;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields written for a rule. */
export type VisibilityRuleWrite = Omit<VisibilityRuleRecord, 'id' | 'createdAt' | 'updatedAt'>;

/** Filters for `listVisibilityRules`. */
export interface VisibilityRuleListQuery {
  includeInactive?: boolean | undefined;
  ruleType?: VisibilityRuleType | undefined;
}

interface RuleRow {
  id: string;
  rule_type: VisibilityRuleType;
  effect: VisibilityEffect;
  tool_id: string | null;
  category_id: string | null;
  plugin_id: string | null;
  conditions: Record<string, unknown>;
  priority: number;
  is_active: boolean;
  description: string;
  created_at: unknown;
  updated_at: unknown;
}

const SELECT_RULES = `SELECT id, rule_type, effect, tool_id, category_id, plugin_id, conditions, priority, is_active,
  description, created_at, updated_at FROM tool_visibility_rules`;

function toRuleRecord(row: RuleRow): VisibilityRuleRecord {
  return {
    id: row.id,
    ruleType: row.rule_type,
    effect: row.effect,
    toolId: row.tool_id,
    categoryId: row.category_id,
    pluginId: row.plugin_id,
    conditions: row.conditions,
    priority: row.priority,
    isActive: row.is_active,
    description: row.description,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function ruleParams(rule: VisibilityRuleWrite): unknown[] {
  return [
    rule.ruleType, rule.effect, rule.toolId, rule.categoryId, rule.pluginId, jsonParam(rule.conditions),
    rule.priority, rule.isActive, rule.description,
  ];
}

/** Finds one rule by id. */
export async function findVisibilityRuleById(db: Queryable, id: string): Promise<VisibilityRuleRecord | undefined> {
  const { rows } = await db.query<RuleRow>(`${SELECT_RULES} WHERE id = $1`, [id]);
  return rows[0] === undefined ? undefined : toRuleRecord(rows[0]);
}

/** Lists rules in evaluation order: priority descending, deny before allow at equal priority. */
export async function listVisibilityRules(db: Queryable, query: VisibilityRuleListQuery = {}): Promise<VisibilityRuleRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (!query.includeInactive) where.push('is_active');
  if (query.ruleType !== undefined) {
    params.push(query.ruleType);
    where.push(`rule_type = $${params.length}`);
  }
  const whereSql = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  const { rows } = await db.query<RuleRow>(
    `${SELECT_RULES} ${whereSql} ORDER BY priority DESC, (effect = 'deny') DESC, created_at, id`,
    params,
  );
  return rows.map(toRuleRecord);
}

/** Inserts a rule and returns its id. */
export async function insertVisibilityRule(db: Queryable, rule: VisibilityRuleWrite, now: Date): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO tool_visibility_rules (rule_type, effect, tool_id, category_id, plugin_id, conditions, priority, is_active,
       description, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $10) RETURNING id`,
    [...ruleParams(rule), timeParam(now)],
  );
  return rows[0]!.id;
}

/** Rewrites a rule. Returns false when it does not exist. */
export async function updateVisibilityRule(db: Queryable, id: string, rule: VisibilityRuleWrite, now: Date): Promise<boolean> {
  const result = await db.query(
    `UPDATE tool_visibility_rules SET rule_type = $1, effect = $2, tool_id = $3, category_id = $4, plugin_id = $5,
       conditions = $6::jsonb, priority = $7, is_active = $8, description = $9, updated_at = $10
     WHERE id = $11`,
    [...ruleParams(rule), timeParam(now), id],
  );
  return result.affectedRows > 0;
}

/** Deletes a rule. Returns false when it does not exist. */
export async function deleteVisibilityRule(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM tool_visibility_rules WHERE id = $1', [id]);
  return result.affectedRows > 0;
}
