/**
 * @module selection/engine/event-journal
 * The selection events' journal on the embedded database (issue #23): each event is appended to
 * a file in the data folder before its id is returned, written to the database in the quiet
 * period as before, and whatever a killed process left unwritten is written at the next start.
 */
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { openAppendJournal, type AppendJournal } from '../../store/append-journal.ts';
import { createGroupCommit } from '../../store/group-commit.ts';
import { isRowError } from '../../store/batch-writer.ts';
import { insertSelectionEvents, type SelectionEventWrite } from '../../store/repositories/selection-events.ts';

const nullableText = z.string().nullable();

/** One journaled event as read back (the journal is a file on disk: parsed, not cast). */
const journaledEventSchema = z.object({
  id: z.string().uuid(),
  queryText: z.string(),
  pageContext: nullableText,
  orgId: nullableText,
  userId: nullableText,
  workspaceId: nullableText,
  projectId: nullableText,
  sessionId: nullableText,
  contextKey: z.string(),
  tier: nullableText,
  provider: z.string(),
  selectedToolIds: z.array(z.string()),
  candidateCount: z.number(),
  selectionMethod: z.string(),
  latencyMs: z.number(),
  stageTimings: z.record(z.string(), z.number()),
  tokensUsed: z.number(),
  tokensTotal: z.number(),
  tokensSaved: z.number(),
  warnings: z.array(z.string()),
  createdAt: z.coerce.date(),
});

/** Opens the events' journal in `directory` (inside the data folder, whose lock makes this process its only writer). */
export function openEventJournal(directory: string): AppendJournal<SelectionEventWrite> {
  return openAppendJournal<SelectionEventWrite>({
    directory,
    parse: (value) => {
      const parsed = journaledEventSchema.safeParse(value);
      return parsed.success ? parsed.data : undefined;
    },
  });
}

/** What `recoverJournaledEvents` did. */
export interface JournalRecovery {
  written: number;
  /** Refused by the database for their data (logged, not kept). */
  refused: number;
  /** Lines that could not be read (a line torn by the kill). */
  unreadable: number;
}

/**
 * Writes the events a previous run journaled and did not write. Written again is harmless (the
 * insert skips ids already stored). When the database fails for a reason that is not the rows',
 * the journal is kept for the next start and the error is thrown.
 */
export async function recoverJournaledEvents(db: Database, journal: AppendJournal<SelectionEventWrite>, logger: Logger): Promise<JournalRecovery> {
  const writer = createGroupCommit<SelectionEventWrite>({ write: (batch) => insertSelectionEvents(db, batch) });
  const results = await Promise.allSettled(journal.recovered.map((event) => writer.submit(event)));
  let refused = 0;
  for (const [index, result] of results.entries()) {
    if (result.status === 'fulfilled') continue;
    if (!isRowError(result.reason)) throw result.reason;
    refused++;
    logger.warn({ err: result.reason, eventId: journal.recovered[index]!.id }, 'selection: a journaled event was refused by the database; dropped');
  }
  journal.discardRecovered();
  return { written: results.length - refused, refused, unreadable: journal.unreadable };
}
