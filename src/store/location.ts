/**
 * @module store/location
 * One string picks the store (see `store/open.ts`): parsed here, apart from what opens it, so
 * that finding a running server's folder loads neither the migrations nor the lock (issue #28).
 */
import { resolve } from 'node:path';

/** Where the data lives, parsed from one setting. */
export type StoreLocation =
  | { kind: 'postgres'; url: string }
  | { kind: 'memory' }
  | { kind: 'folder'; path: string };

/** Parses a database URL or a data-folder path into a location. */
export function parseStoreLocation(value: string): StoreLocation {
  if (/^postgres(ql)?:\/\//.test(value)) return { kind: 'postgres', url: value };
  if (value === 'memory://' || value === 'memory') return { kind: 'memory' };
  const path = value.startsWith('file://') ? new URL(value).pathname : value;
  return { kind: 'folder', path: resolve(path) };
}
