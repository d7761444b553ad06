/**
 * @module gateway/mrtr/gather-round
 * When to show a paused call's requests to the client (issue #24): requests a plugin makes at
 * once (`Promise.all`) arrive a few ms apart and go out as one round, once the plugin has been
 * quiet for `gatherMs`. Quiet is only believed after the process has read what was already
 * waiting on its connections: a timer that fires late (a loaded machine, a long task on the
 * event loop) runs before Node's I/O poll, so deciding right then would cut a round short while
 * the plugin's other requests sit unread in the pipe.
 */
import { setImmediate as afterIoPoll } from 'node:timers/promises';
import type { ParkedCall } from './parked-calls.ts';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves at the call's end or when its requests make a round; at most about `gatherMs * 20` after the first one. */
export async function gatherRound(call: ParkedCall, gatherMs: number): Promise<void> {
  await call.changed();
  for (let waited = 0; waited < gatherMs * 20; waited += gatherMs) {
    if (call.outcome) return;
    if (call.quietFor() >= gatherMs) {
      // An immediate runs after the next I/O poll: a request written before this moment is read (and asked) first.
      const asks = call.asks;
      await afterIoPoll();
      if (call.outcome || call.asks === asks) return;
    }
    await sleep(gatherMs);
  }
}
