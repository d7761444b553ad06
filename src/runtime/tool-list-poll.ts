/**
 * @module runtime/tool-list-poll
 * Issue #24: a 2026-07-28 plugin that declares no `tools.listChanged` cannot tell Quiver its tool
 * list changed, but its `tools/list` result says how long it stays fresh (`ttlMs`). Such a list
 * is read again when it goes stale (never more often than `floorMs`), and a list whose content
 * differs from the last one is reported as a change, which takes the same path as a
 * notification (the catalog re-syncs the plugin under the pinning rules). A list without a
 * positive `ttlMs` (the SDK's default is 0: "do not cache") is not polled: the plugin made no
 * statement about freshness, and polling every plugin would cost a request per interval each.
 */
import { createHash } from 'node:crypto';

/** Least time between two reads of one plugin's list (ms). */
export const TOOL_LIST_POLL_FLOOR_MS = 5_000;

/** A page of the plugin's list as the v2 client returns it. */
export interface ListedTools {
  tools: unknown[];
  ttlMs?: number;
}

function fingerprint(list: ListedTools): string {
  return createHash('sha256').update(JSON.stringify(list.tools)).digest('hex');
}

/** Polls while the list carries a positive ttlMs; returns the stop. Errors end the polling (the connection is going). */
export function pollToolList(list: () => Promise<ListedTools>, onChange: () => void, floorMs = TOOL_LIST_POLL_FLOOR_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let last: string | undefined;
  const read = async (): Promise<void> => {
    if (stopped) return;
    let page: ListedTools;
    try {
      page = await list();
    } catch {
      stopped = true;
      return;
    }
    const seen = fingerprint(page);
    if (last !== undefined && seen !== last && !stopped) onChange();
    last = seen;
    const ttlMs = typeof page.ttlMs === 'number' && Number.isFinite(page.ttlMs) ? page.ttlMs : 0;
    if (ttlMs <= 0 || stopped) return;
    timer = setTimeout(() => void read(), Math.max(floorMs, ttlMs));
    timer.unref();
  };
  void read();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
