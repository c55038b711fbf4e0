// Doctor check `upstream-ws` (cold): each upstream PubSub WebSocket accepts slotSubscribe and delivers a
// slotNotification within WS_WAIT_MS (the telemetry thread follows slots this way; without it, it polls getSlot and
// leader timing degrades). Uses the telemetry thread's own client (src/telemetry/ws-slot-client.ts).
import { urlForLog } from '../log/url-for-log.js';
import { SlotSubscription } from '../telemetry/ws-slot-client.js';
import { fail, pass, type Finding } from './finding.js';

/** A notification comes every slot (400 ms on mainnet): 3 s is 7 slots. */
export const WS_WAIT_MS = 3_000;

export function checkUpstreamWs(url: string, usedFor: string, timeoutMs: number): Promise<Finding> {
  const id = 'upstream-ws';
  const shown = urlForLog(url);
  const wait = Math.min(WS_WAIT_MS, timeoutMs);
  return new Promise((resolve) => {
    let subscribed = false;
    let settled = false;
    const t0 = performance.now();
    const done = (f: Finding): void => {
      if (settled) return; // a second notification may arrive before the socket is closed
      settled = true;
      clearTimeout(timer);
      sub.close();
      resolve(f);
    };
    const sub = new SlotSubscription({
      url,
      connectTimeoutMs: wait,
      onState: (s) => {
        if (s) subscribed = true;
      },
      onSlot: (slot) => done(pass(id, `${shown} (${usedFor}): slotSubscribe delivered slot ${slot} after ${Math.round(performance.now() - t0)} ms`, { url: shown, slot })),
    });
    const timer = setTimeout(
      () =>
        done(
          subscribed
            ? fail(id, `${shown} (${usedFor}): subscribed, but no slotNotification in ${wait} ms: the node is not following the cluster`, 'check the node catches up, or use another RPC node for telemetry.wsUrl / upstream.wsUrl', { url: shown })
            : fail(
                id,
                `${shown} (${usedFor}): no slotSubscribe in ${wait} ms (connection refused, not a WebSocket, or not a Solana PubSub endpoint)`,
                'open the node\'s PubSub port (RPC port + 1 by default) to this host, or set telemetry.wsUrl / upstream.wsUrl to where it listens',
                { url: shown },
              ),
        ),
      wait,
    );
    sub.start();
  });
}
