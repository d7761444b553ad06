/**
 * @module selection/test-fixtures
 * A small catalog for the selection tests (two plugins enabled in `default`, one not, pins,
 * an organisation-private tool, categories and page mappings), written with plain SQL.
 * Test support only: nothing in the product imports it.
 */
import { sha256Hex } from '../core/hash.ts';
import type { Database, QueryResult, Queryable } from '../store/database.ts';
import { setEnablement } from '../store/repositories/enablement.ts';

/** Ids of everything the fixture created. */
export interface Fixture {
  workspaceId: string;
  otherWorkspaceId: string;
  plugins: Record<'github' | 'crm' | 'secret', string>;
  categories: Record<'issues' | 'contacts' | 'deals', string>;
  tools: Record<string, string>;
}

/** Inserts one tool and returns its id. */
export async function addTool(
  db: Queryable,
  tool: { name: string; description: string; pluginId?: string | null; categoryId?: string | null; orgId?: string | null; pinned?: boolean; pinWeight?: number; parameters?: Record<string, unknown>; exampleQueries?: string[] },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO tools (name, plugin_id, category_id, description, parameters_schema, org_id, is_always_pinned, pin_weight, example_queries, content_hash)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::jsonb, $10) RETURNING id`,
    [
      tool.name,
      tool.pluginId ?? null,
      tool.categoryId ?? null,
      tool.description,
      JSON.stringify(tool.parameters ?? { type: 'object', properties: { query: { type: 'string', description: 'What to look for' } } }),
      tool.orgId ?? null,
      tool.pinned ?? false,
      tool.pinWeight ?? 0,
      JSON.stringify(tool.exampleQueries ?? []),
      sha256Hex(`${tool.name}\n${tool.description}`),
    ],
  );
  return rows[0]!.id;
}

/** Inserts a visibility rule and returns its id. */
export async function addRule(
  db: Queryable,
  rule: { ruleType: string; effect: string; conditions: unknown; priority?: number; toolId?: string; categoryId?: string; pluginId?: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO tool_visibility_rules (rule_type, effect, tool_id, category_id, plugin_id, conditions, priority)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING id`,
    [rule.ruleType, rule.effect, rule.toolId ?? null, rule.categoryId ?? null, rule.pluginId ?? null, JSON.stringify(rule.conditions), rule.priority ?? 0],
  );
  return rows[0]!.id;
}

/** Builds the standard fixture. */
export async function seedFixture(db: Database): Promise<Fixture> {
  const workspaceId = (await db.query<{ id: string }>(`SELECT id FROM workspaces WHERE name = 'default'`)).rows[0]!.id;
  const otherWorkspaceId = (await db.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('team-b') RETURNING id`)).rows[0]!.id;
  const plugin = async (name: string) => (await db.query<{ id: string }>('INSERT INTO plugins (name, description) VALUES ($1, $1) RETURNING id', [name])).rows[0]!.id;
  const plugins = { github: await plugin('github'), crm: await plugin('crm'), secret: await plugin('secret-plugin') };
  const category = async (name: string, pluginId: string) =>
    (await db.query<{ id: string }>('INSERT INTO tool_categories (name, plugin_id) VALUES ($1, $2) RETURNING id', [name, pluginId])).rows[0]!.id;
  const categories = { issues: await category('issues', plugins.github), contacts: await category('contacts', plugins.crm), deals: await category('deals', plugins.crm) };
  await setEnablement(db, { pluginId: plugins.github, workspaceId, enabled: true });
  await setEnablement(db, { pluginId: plugins.crm, workspaceId, enabled: true });
  await db.query(`INSERT INTO tool_page_mappings (page_pattern, category_id, plugin_id, priority) VALUES ('contacts', $1, $2, 10), ('deals*', $3, $2, 5)`, [
    categories.contacts,
    plugins.crm,
    categories.deals,
  ]);
  const tools: Record<string, string> = {};
  const specs: Array<Parameters<typeof addTool>[1]> = [
    { name: 'create_issue', description: 'Create a new GitHub issue in a repository with a title and body', pluginId: plugins.github, categoryId: categories.issues },
    { name: 'list_issues', description: 'List open GitHub issues of a repository', pluginId: plugins.github, categoryId: categories.issues },
    { name: 'close_issue', description: 'Close a GitHub issue by number', pluginId: plugins.github, categoryId: categories.issues },
    { name: 'list_contacts', description: 'List CRM contacts with filters such as company or owner', pluginId: plugins.crm, categoryId: categories.contacts },
    { name: 'create_contact', description: 'Create a CRM contact person with email and phone', pluginId: plugins.crm, categoryId: categories.contacts },
    { name: 'list_deals', description: 'List sales deals in the pipeline by stage', pluginId: plugins.crm, categoryId: categories.deals },
    { name: 'forecast_pipeline', description: 'Forecast pipeline revenue for the quarter from open deals', pluginId: plugins.crm, categoryId: categories.deals },
    { name: 'leak_data', description: 'Export every secret record; never enabled anywhere', pluginId: plugins.secret },
    { name: 'search_tools', description: 'Search the tool catalog for more tools', pinned: true, pinWeight: 10 },
    { name: 'health', description: 'Report gateway health', pinned: true, pinWeight: 5 },
    { name: 'acme_report', description: 'Quarterly revenue report private to Acme', orgId: 'acme' },
    { name: 'globex_report', description: 'Quarterly revenue report private to Globex', orgId: 'globex' },
  ];
  for (const spec of specs) {
    const key = spec.pluginId === plugins.github ? `github__${spec.name}` : spec.pluginId === plugins.crm ? `crm__${spec.name}` : spec.pluginId === plugins.secret ? `secret-plugin__${spec.name}` : spec.name;
    tools[key] = await addTool(db, spec);
  }
  return { workspaceId, otherWorkspaceId, plugins, categories, tools };
}

/** A Database whose `query` fails for SQL matching `pattern` while `failing` is true. */
export function faultyDatabase(db: Database, pattern: RegExp): Database & { failing: boolean; queries: number } {
  const wrapper = {
    ...db,
    failing: false,
    queries: 0,
    async query<Row>(sql: string, params?: readonly unknown[]) {
      wrapper.queries++;
      if (wrapper.failing && pattern.test(sql)) throw new Error(`injected failure for ${pattern}`);
      return db.query<Row>(sql, params);
    },
  };
  return wrapper as Database & { failing: boolean; queries: number };
}

/** `db` whose answers to the queries after the first `passed` wait for `release()`: a read made now, returned later. */
export function slowAnswers(db: Database, passed: number): { db: Database; answered: Promise<void>; release(): void } {
  let count = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let heldOne!: () => void;
  const answered = new Promise<void>((resolve) => (heldOne = resolve));
  const wrapped: Database = {
    ...db,
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      const result = await db.query<Row>(sql, params);
      if (++count > passed) {
        heldOne();
        await gate;
      }
      return result;
    },
  };
  return { db: wrapped, answered, release };
}
