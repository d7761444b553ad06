/**
 * @module composition/server-flags
 * What `quiver serve` needs before it starts anything: its MCP session flags and the bind
 * check. Kept apart from `server.ts` so the command list (and `quiver --help`) loads without
 * the gateway, the API and the store behind them (issue #28).
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { isPublicBindHost } from '../core/bind-host.ts';

export { MCP_STDIO_OPTIONS, identityFromFlags, parseExposureMode } from '../gateway/identity.ts';

/** Throws invalid_input for a non-loopback host unless binding every interface was asked for explicitly. */
export function assertBindAllowed(host: string, allowPublicBind: boolean): void {
  if (isPublicBindHost(host) && !allowPublicBind) {
    throw new QuiverError(
      ErrorCodes.invalidInput,
      `refusing to listen on ${host}: only loopback is allowed by default; pass --dangerously-bind-all-interfaces to expose Quiver`,
    );
  }
}
