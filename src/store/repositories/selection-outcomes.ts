/**
 * @module store/repositories/selection-outcomes
 * Outcomes of many selection events in one statement (issue #18 finding 9), with their bandit
 * increments (issue #28): the gateway reports an outcome after every search, and writing them
 * one transaction each put the embedded database on every search's path. Each event still
 * takes its outcome only once.
 */
import type { Queryable } from '../database.ts';
import { armIncrementUpsert } from './bandit-stats.ts';
import { jsonParam, timeParam } from './mapping.ts';

/** One event's outcome, already resolved to the offered tools that were called. */
export interface SelectionOutcomeWrite {
  id: string;
  toolsCalled: string[];
  calledToolIds: string[];
  success: boolean;
  outcome: string;
  at: Date;
}

/** An arm increment that one event's outcome brings, applied only if that outcome is written. */
export interface OutcomeArmIncrement {
  eventId: string;
  contextKey: string;
  toolId: string;
  alpha: number;
  beta: number;
  selections: number;
  successes: number;
}

/**
 * Writes the outcomes of events that have none yet and the bandit increments of the outcomes it
 * wrote, in one statement (issue #28): the queued-outcome flush was a transaction of BEGIN, the
 * outcome UPDATE, one arm upsert per context key and COMMIT (4–8 statements under five
 * organisations); a statement is atomic by itself. An event already holding an outcome is not
 * written and moves no arm (the UPDATE's RETURNING feeds the upsert). Increments are summed per (context, tool), since one statement
 * cannot update a row twice, and written in (context, tool) order, so concurrent writers lock
 * arms in the same order; rows for deleted tools are skipped. Returns the ids written.
 */
export async function writeEventOutcomesWithArms(
  db: Queryable,
  outcomes: readonly SelectionOutcomeWrite[],
  increments: readonly OutcomeArmIncrement[],
): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const records = outcomes.map((o) => ({
    id: o.id,
    tools_called: o.toolsCalled,
    called_tool_ids: o.calledToolIds,
    success: o.success,
    outcome: o.outcome,
    at: timeParam(o.at),
  }));
  const arms = increments.map((i) => ({ event_id: i.eventId, context_key: i.contextKey, tool_id: i.toolId, alpha: i.alpha, beta: i.beta, selections: i.selections, successes: i.successes }));
  const { rows } = await db.query<{ id: string }>(
    `WITH written AS (
       UPDATE tool_selection_events AS e
          SET tools_called = x.tools_called, called_tool_ids = x.called_tool_ids, tool_call_success = x.success,
              outcome = x.outcome, outcome_at = x.at
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, tools_called text[], called_tool_ids uuid[], success boolean, outcome text, at timestamptz)
        WHERE e.id = x.id AND e.id = ANY($2::uuid[]) AND e.outcome_at IS NULL
        RETURNING e.id
     ), summed AS (
       SELECT i.context_key, i.tool_id, sum(i.alpha) AS alpha, sum(i.beta) AS beta, sum(i.selections) AS selections, sum(i.successes) AS successes
         FROM jsonb_to_recordset($3::jsonb) AS i(event_id uuid, context_key text, tool_id uuid, alpha double precision, beta double precision, selections bigint, successes bigint)
         JOIN written w ON w.id = i.event_id
        GROUP BY i.context_key, i.tool_id
     ), arms AS (
       ${armIncrementUpsert('summed')}
     )
     SELECT id FROM written`,
    // The id list lets the planner find the rows by primary key however large the table grows.
    [jsonParam(records), records.map((record) => record.id), jsonParam(arms)],
  );
  return new Set(rows.map((row) => row.id));
}
