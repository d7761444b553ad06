/**
 * @module store/repositories/selection-outcomes
 * Outcomes of many selection events in one statement (issue #18 finding 9): the gateway
 * reports an outcome after every search, and writing them one transaction each put the
 * embedded database on every search's path. Each event still takes its outcome only once.
 */
import type { Queryable } from '../database.ts';
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

/** Writes the outcomes of events that have none yet; returns the ids actually written. */
export async function writeEventOutcomes(db: Queryable, outcomes: readonly SelectionOutcomeWrite[]): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const records = outcomes.map((o) => ({
    id: o.id,
    tools_called: o.toolsCalled,
    called_tool_ids: o.calledToolIds,
    success: o.success,
    outcome: o.outcome,
    at: timeParam(o.at),
  }));
  const { rows } = await db.query<{ id: string }>(
    `UPDATE tool_selection_events AS e
        SET tools_called = x.tools_called, called_tool_ids = x.called_tool_ids, tool_call_success = x.success,
            outcome = x.outcome, outcome_at = x.at
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, tools_called text[], called_tool_ids uuid[], success boolean, outcome text, at timestamptz)
      WHERE e.id = x.id AND e.id = ANY($2::uuid[]) AND e.outcome_at IS NULL
      RETURNING e.id`,
    // The id list lets the planner find the rows by primary key however large the table grows.
    [jsonParam(records), records.map((record) => record.id)],
  );
  return new Set(rows.map((row) => row.id));
}
