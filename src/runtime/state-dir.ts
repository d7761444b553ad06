/**
 * @module runtime/state-dir
 * Where a plugin's writable state folder is: `<stateRoot>/<pluginId, made path-safe>`. One
 * function so the supervisor that creates it and `plugin show` that prints it agree.
 */
import { join } from 'node:path';

/** A plugin id (or any value) made safe as one path segment. */
export function sanitizeForPath(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
}

/** The state folder of a plugin under `stateRoot`. */
export function pluginStateDir(stateRoot: string, pluginId: string): string {
  return join(stateRoot, sanitizeForPath(pluginId));
}
