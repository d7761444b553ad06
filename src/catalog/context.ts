/**
 * @module catalog/context
 * What every part of the catalog service shares: the database, the clock, and the change
 * hook the selection caches subscribe to. Writes call `emit` only after their transaction
 * committed, so a subscriber never reloads data that is about to roll back.
 */
import { QuiverError } from '../core/errors.ts';
import type { Database } from '../store/database.ts';
import { isUniqueViolation } from '../store/repositories/mapping.ts';

/** What changed: the selection caches drop the matching entries (seed 001 §4.3). */
export interface CatalogChangeEvent {
  kind: 'tools' | 'categories' | 'mappings' | 'rules';
  /** The rows that changed, when known; absent means "anything of this kind". */
  ids?: string[];
}

/** The slice of a logger the catalog uses (pino's `warn(object, message)` fits). */
export interface CatalogLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `createCatalogService`. */
export interface CatalogServiceOptions {
  db: Database;
  /** The time written to created/updated/deleted columns (default: the system clock). */
  clock?: () => Date;
  /** Called after each committed write. A throwing subscriber is logged, never undoes the write. */
  onChange?: (event: CatalogChangeEvent) => void;
  logger?: CatalogLogger;
  /**
   * Stores what a selection needs of the synced tools (new or changed), after the sync committed
   * and before its change is announced: the app passes the selection's token counts (issue #28:
   * a server then never loads the tokenizer for a tool it was synced with). A failure is logged;
   * the sync stands.
   */
  afterSync?: (db: Database, toolIds: readonly string[]) => Promise<unknown>;
}

/** The shared internals handed to each part of the service. */
export interface CatalogContext {
  db: Database;
  now(): Date;
  emit(...events: CatalogChangeEvent[]): void;
  afterSync?: CatalogServiceOptions['afterSync'];
  logger?: CatalogLogger;
}

/** Builds the shared context from the service options. */
export function createCatalogContext(options: CatalogServiceOptions): CatalogContext {
  const clock = options.clock ?? (() => new Date());
  return {
    db: options.db,
    now: clock,
    afterSync: options.afterSync,
    logger: options.logger,
    emit(...events) {
      if (options.onChange === undefined) return;
      for (const event of events) {
        try {
          options.onChange(event);
        } catch (error) {
          // The write is committed; a failing subscriber must not make it look failed.
          options.logger?.warn({ err: error, event }, 'catalog onChange subscriber threw');
        }
      }
    },
  };
}

/** Runs `work`, turning a unique-constraint violation into a `conflict` QuiverError. */
export async function conflictOnDuplicate<T>(work: () => Promise<T>, message: string, details?: unknown): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw new QuiverError('conflict', message, { details, cause: error });
    throw error;
  }
}
