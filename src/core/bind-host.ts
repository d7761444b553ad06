/**
 * @module core/bind-host
 * Where `quiver serve` listens by default and whether a host is public. Apart from config.ts
 * (which re-exports both) so the command list, and with it `quiver --help`, can show the default
 * port and check a bind without loading the configuration's schemas (issue #28).
 */

/** Default HTTP port of `quiver serve`. */
export const DEFAULT_PORT = 7411;

/** True when `host` listens on every interface (or a non-loopback address). */
export function isPublicBindHost(host: string): boolean {
  return !(host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.startsWith('127.'));
}
