/**
 * @module store/repositories/plugin-install-leases
 * The reservation of a plugin row while it is being installed (migration 0033): the row is
 * inserted or claimed as `failed` with the installing process's identity and a lease measured on
 * the database's clock (so replicas with skewed clocks agree), renewed while the install runs,
 * and cleared by the install's last transaction. Start-up recovery lists the reservations and
 * deletes those whose owner is gone, each delete conditional on the owner it judged, so two
 * replicas recovering at once, or a new install claiming the row meanwhile, never collide.
 */
import type { Queryable } from '../database.ts';
import { processOwnerSchema, type ProcessOwner } from '../process-owner.ts';
import { jsonParam } from './mapping.ts';

/** A `failed` plugin row: an install in progress, or one interrupted by a crash. */
export interface InstallReservation {
  id: string;
  name: string;
  source: Record<string, unknown>;
  /** Who reserved it; null for rows left by versions before the lease existed. */
  owner: ProcessOwner | null;
  /** The owner as stored, for conditional deletes. */
  rawOwner: unknown;
  /** True when the lease ran out (or there is none and the row has not changed for a lease's length). */
  expired: boolean;
}

/** Reserves a new plugin row named `name` as `failed`, owned by `owner` for `leaseSeconds`; resolves to its id. */
export async function reservePluginInstall(
  db: Queryable,
  input: { name: string; sourceType: string; source: Record<string, unknown>; owner: ProcessOwner; leaseSeconds: number },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO plugins (name, source_type, source, status, install_owner, install_lease_until)
     VALUES ($1, $2, $3::jsonb, 'failed', $4::jsonb, now() + make_interval(secs => $5))
     RETURNING id`,
    [input.name, input.sourceType, jsonParam(input.source), jsonParam(input.owner), input.leaseSeconds],
  );
  return rows[0]!.id;
}

/**
 * Takes over an interrupted reservation for a new install: succeeds only if the row is still
 * `failed` and still owned by `previousOwner` (as read), so two claimants cannot both win.
 */
export async function claimPluginInstall(
  db: Queryable,
  input: { id: string; previousOwner: unknown; owner: ProcessOwner; leaseSeconds: number },
): Promise<boolean> {
  const result = await db.query(
    `UPDATE plugins SET install_owner = $3::jsonb, install_lease_until = now() + make_interval(secs => $4), updated_at = now()
      WHERE id = $1 AND status = 'failed' AND install_owner IS NOT DISTINCT FROM $2::jsonb`,
    [input.id, input.previousOwner === null ? null : jsonParam(input.previousOwner), jsonParam(input.owner), input.leaseSeconds],
  );
  return result.affectedRows === 1;
}

/** Extends the lease of a reservation `owner` still holds; false when it no longer does. */
export async function renewPluginInstallLease(db: Queryable, id: string, owner: ProcessOwner, leaseSeconds: number): Promise<boolean> {
  const result = await db.query(
    `UPDATE plugins SET install_lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND install_owner = $2::jsonb`,
    [id, jsonParam(owner), leaseSeconds],
  );
  return result.affectedRows === 1;
}

/** Clears the reservation: the install is complete (called in its last transaction). */
export async function finishPluginInstall(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE plugins SET install_owner = NULL, install_lease_until = NULL WHERE id = $1', [id]);
}

/** Every `failed` plugin row (or the one with `id`) with its owner and whether its lease ran out. */
export async function listInstallReservations(db: Queryable, leaseSeconds: number, id?: string): Promise<InstallReservation[]> {
  const { rows } = await db.query<{ id: string; name: string; source: Record<string, unknown>; install_owner: unknown; expired: boolean }>(
    `SELECT id, name, source, install_owner,
            COALESCE(install_lease_until < now(), updated_at < now() - make_interval(secs => $1)) AS expired
       FROM plugins WHERE status = 'failed' AND ($2::uuid IS NULL OR id = $2::uuid) ORDER BY name`,
    [leaseSeconds, id ?? null],
  );
  return rows.map((row) => {
    const owner = processOwnerSchema.safeParse(row.install_owner);
    return { id: row.id, name: row.name, source: row.source, owner: owner.success ? owner.data : null, rawOwner: row.install_owner, expired: row.expired };
  });
}

/** Deletes an interrupted reservation if it is still `failed` and owned as read; true when this call deleted it. */
export async function deleteInstallReservation(db: Queryable, id: string, rawOwner: unknown): Promise<boolean> {
  const result = await db.query(`DELETE FROM plugins WHERE id = $1 AND status = 'failed' AND install_owner IS NOT DISTINCT FROM $2::jsonb`, [
    id,
    rawOwner === null ? null : jsonParam(rawOwner),
  ]);
  return result.affectedRows === 1;
}

/** The reservation of one plugin row, if it is `failed`. */
export async function findInstallReservation(db: Queryable, id: string, leaseSeconds: number): Promise<InstallReservation | undefined> {
  return (await listInstallReservations(db, leaseSeconds, id))[0];
}
