/**
 * @module plugins/service/reservation
 * The row of a new install, claimed before anything is fetched (migration 0033): a second
 * install of the same name fails at once, and the row carries this process's lease, renewed
 * while the install runs, so start-up recovery (recovery.ts) rolls back an install whose
 * process died — and only then may another install take the row over.
 */
import { hostname } from 'node:os';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { processOwner } from '../../store/process-owner.ts';
import { isUniqueViolation } from '../../store/repositories/mapping.ts';
import {
  claimPluginInstall,
  findInstallReservation,
  renewPluginInstallLease,
  reservePluginInstall,
} from '../../store/repositories/plugin-install-leases.ts';
import type { PluginRecord } from '../../store/repositories/plugins.ts';
import { installAbandoned, INSTALL_LEASE_SECONDS } from '../recovery.ts';
import type { PluginContext } from './context.ts';

/** A reserved install row; `stop()` ends the lease renewal (the row itself stays). */
export interface InstallReservation {
  id: string;
  stop(): void;
}

/**
 * Reserves the row of a new install, or takes over the row `existing` that a crashed install
 * left (only once its lease is abandoned); `conflict` when the name is taken or still installing.
 */
export async function reserveInstall(
  context: PluginContext,
  name: string,
  sourceKind: string,
  existing: PluginRecord | undefined,
): Promise<InstallReservation> {
  const { db, logger } = context;
  const owner = processOwner() ?? { host: hostname(), pid: process.pid };
  let id: string;
  if (existing === undefined) {
    try {
      id = await reservePluginInstall(db, { name, sourceType: sourceKind, source: {}, owner, leaseSeconds: INSTALL_LEASE_SECONDS });
    } catch (error) {
      if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, `a plugin named '${name}' already exists`, { details: { name }, cause: error });
      throw error;
    }
  } else {
    const reservation = await findInstallReservation(db, existing.id, INSTALL_LEASE_SECONDS);
    const claimed =
      reservation !== undefined &&
      installAbandoned(reservation) &&
      (await claimPluginInstall(db, { id: existing.id, previousOwner: reservation.rawOwner, owner, leaseSeconds: INSTALL_LEASE_SECONDS }));
    if (!claimed) {
      throw new QuiverError(ErrorCodes.conflict, `plugin '${name}' is being installed by another process; try again once it has finished`, {
        details: { name, pluginId: existing.id },
      });
    }
    id = existing.id;
  }
  const renew = setInterval(() => {
    void renewPluginInstallLease(db, id, owner, INSTALL_LEASE_SECONDS).catch((error) => logger.warn({ err: error, plugin: name }, 'renewing the install lease failed'));
  }, (INSTALL_LEASE_SECONDS * 1000) / 3);
  renew.unref();
  return { id, stop: () => clearInterval(renew) };
}
