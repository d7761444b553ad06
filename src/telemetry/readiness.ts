/**
 * @module telemetry/readiness
 * What `/readyz` answers (orchestrators' readiness probe; `/healthz` stays the liveness probe):
 * ready while the database answers within a bound, every migration this build knows is applied,
 * and the replica is not draining. Shutdown starts draining first, so a load balancer stops
 * sending new requests before the server closes. Database checks are reused for one second, so
 * a probe storm costs one query a second.
 */
import type { Queryable } from '../store/database.ts';

/** One readiness answer. */
export interface ReadinessReport {
  ready: boolean;
  checks: { database: 'ok' | 'unreachable'; migrations: 'ok' | 'pending' | 'unknown'; draining: boolean };
  /** Migrations this build knows that the database lacks. */
  pending?: string[];
  /** Degradations that do not make the replica unready (e.g. the embedding model fell back, issue #25). */
  warnings?: string[];
}

/** The readiness of a replica. */
export interface Readiness {
  check(): Promise<ReadinessReport>;
  /** From now on `/readyz` answers 503. */
  startDraining(): void;
  readonly draining: boolean;
  /** Adds a source of warnings shown in every report (they never make the replica unready). */
  addWarnings(source: () => readonly string[]): void;
}

/** Options of `createReadiness`. */
export interface ReadinessOptions {
  db: Queryable;
  /** Names of the migrations this build ships (`loadMigrations()`). */
  expectedMigrations: readonly string[];
  /** Longest a database check may take (ms, default 2,000). */
  timeoutMs?: number;
  /** How long a database check is reused (ms, default 1,000). */
  reuseMs?: number;
}

interface DatabaseCheck {
  database: ReadinessReport['checks']['database'];
  migrations: ReadinessReport['checks']['migrations'];
  pending?: string[];
}

async function checkDatabase(db: Queryable, expected: readonly string[], timeoutMs: number): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('database check timed out')), timeoutMs);
  });
  try {
    const { rows } = await Promise.race([db.query<{ name: string }>('SELECT name FROM schema_migrations'), timeout]);
    const applied = new Set(rows.map((row) => row.name));
    const pending = expected.filter((name) => !applied.has(name));
    return pending.length === 0 ? { database: 'ok', migrations: 'ok' } : { database: 'ok', migrations: 'pending', pending };
  } catch {
    return { database: 'unreachable', migrations: 'unknown' };
  } finally {
    clearTimeout(timer);
  }
}

/** Creates the readiness check of one replica. */
export function createReadiness(options: ReadinessOptions): Readiness {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const reuseMs = options.reuseMs ?? 1_000;
  let draining = false;
  const warningSources: Array<() => readonly string[]> = [];
  let last: { at: number; result: Promise<DatabaseCheck> } | undefined;
  return {
    async check() {
      const now = Date.now();
      if (!last || now - last.at > reuseMs) last = { at: now, result: checkDatabase(options.db, options.expectedMigrations, timeoutMs) };
      const database = await last.result;
      const ready = !draining && database.database === 'ok' && database.migrations === 'ok';
      const warnings = warningSources.flatMap((source) => source());
      return {
        ready,
        checks: { database: database.database, migrations: database.migrations, draining },
        ...(database.pending ? { pending: database.pending } : {}),
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    },
    addWarnings(source) {
      warningSources.push(source);
    },
    startDraining() {
      draining = true;
    },
    get draining() {
      return draining;
    },
  };
}
