/**
 * @module runtime/sandbox-identity
 * Who a sandboxed plugin is on the host, shared by the host probe (host-detection.ts, which
 * proves the sandbox works as that user) and the launch (sandbox.ts).
 */

/** The uid/gid sandboxed plugins run as on the host when Quiver runs as root (`nobody`). */
export const sandboxUid = 65534;

/** Name of the environment variable marking every process a supervisor starts. */
export const supervisorMarkerName = 'QUIVER_SUPERVISOR_ID';
