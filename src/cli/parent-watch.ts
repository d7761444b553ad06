/**
 * @module cli/parent-watch
 * Stopping is stopping (issue #26): a server started by `npx quiver serve`, a shell or an MCP
 * client must not outlive it. SIGTERM to `npx` ends npm and its `sh -c` wrapper, but nothing
 * passes the signal on, so node (and every plugin sandbox under it) would keep running under
 * init. Linux gives an orphan to init or the nearest subreaper, so a change of `process.ppid`
 * means the process that launched us is gone; polled, as Node offers no parent-death signal.
 */

/** How often the parent is checked, ms: the bound is 5 s from SIGTERM to no process left. */
export const PARENT_POLL_MS = 500;

/** Calls `onGone` once when the launching process goes away; returns a stop function. */
export function watchParent(onGone: () => void, options: { intervalMs?: number; ppid?: () => number } = {}): () => void {
  const currentParent = options.ppid ?? (() => process.ppid);
  const launcher = currentParent();
  // Started by init (systemd, a container's PID 1, `setsid -f`) or as PID 1: no parent to outlive.
  if (launcher <= 1) return () => {};
  const timer = setInterval(() => {
    if (currentParent() === launcher) return;
    clearInterval(timer);
    onGone();
  }, options.intervalMs ?? PARENT_POLL_MS);
  // Never the reason the process stays up.
  timer.unref();
  return () => clearInterval(timer);
}
