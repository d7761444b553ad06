/**
 * @module access/authorization-server/adapter
 * `oidc-provider`'s storage adapter on Quiver's database (PGlite or PostgreSQL): every model the
 * provider keeps goes to `auth_provider_records` as its JSON payload with the columns its
 * look-ups need. The contract (upsert, find, findByUid, findByUserCode, consume, destroy,
 * revokeByGrantId) is the provider's; a consumed record is returned with `consumed` set, which
 * is how the provider detects a reused authorization code or refresh token (and revokes the
 * grant).
 */
import type { Queryable } from '../../store/database.ts';
import {
  consumeProviderRecord,
  deleteProviderRecord,
  deleteProviderRecordsOfGrant,
  findProviderRecord,
  findProviderRecordBy,
  upsertProviderRecord,
  type ProviderRecord,
} from '../../store/repositories/auth-provider-records.ts';

type Payload = Record<string, unknown>;

/** What the provider calls on an adapter instance (one per model). */
export interface ProviderAdapter {
  upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void>;
  find(id: string): Promise<Payload | undefined>;
  findByUserCode(userCode: string): Promise<Payload | undefined>;
  findByUid(uid: string): Promise<Payload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

function withConsumed(record: ProviderRecord | undefined): Payload | undefined {
  if (!record) return undefined;
  return record.consumedAt ? { ...record.payload, consumed: Math.floor(record.consumedAt.getTime() / 1000) } : record.payload;
}

/** The adapter class the provider's `adapter` setting takes (constructed with the model name). */
export function databaseAdapter(db: Queryable, now: () => Date = () => new Date()): new (model: string) => ProviderAdapter {
  return class DatabaseAdapter implements ProviderAdapter {
    constructor(readonly model: string) {}

    async upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void> {
      await upsertProviderRecord(db, {
        model: this.model,
        id,
        payload,
        grantId: typeof payload.grantId === 'string' ? payload.grantId : undefined,
        userCode: typeof payload.userCode === 'string' ? payload.userCode : undefined,
        uid: typeof payload.uid === 'string' ? payload.uid : undefined,
        expiresAt: expiresIn ? new Date(now().getTime() + expiresIn * 1000) : undefined,
      });
    }

    async find(id: string): Promise<Payload | undefined> {
      return withConsumed(await findProviderRecord(db, this.model, id, now()));
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return withConsumed(await findProviderRecordBy(db, this.model, 'user_code', userCode, now()));
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      return withConsumed(await findProviderRecordBy(db, this.model, 'uid', uid, now()));
    }

    async consume(id: string): Promise<void> {
      await consumeProviderRecord(db, this.model, id, now());
    }

    async destroy(id: string): Promise<void> {
      await deleteProviderRecord(db, this.model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteProviderRecordsOfGrant(db, grantId);
    }
  };
}
