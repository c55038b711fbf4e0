// Doctor check `upstream-grpc` (cold): the Yellowstone gRPC endpoint (upstream.grpc) answers a Subscribe with slot
// updates within WS_WAIT_MS, and how far its newest slot is behind the cluster RPC's processed slot asked right
// after (a positive figure: the stream is late, and PubSub will lead while it lags by lagSlots or more). Uses the
// telemetry thread's own stream (src/telemetry/geyser/geyser-slot-stream.ts). The x-token is sent, never shown.
import type { GeyserSourceConfig } from '../config/schema.js';
import { urlForLog } from '../log/url-for-log.js';
import { GeyserSlotStream } from '../telemetry/geyser/geyser-slot-stream.js';
import { WS_WAIT_MS } from './check-upstream-ws.js';
import { fail, pass, skip, warn, type Finding } from './finding.js';
import { rpcCall } from './rpc.js';

/** Slot updates to see before judging (a few statuses of one or two slots). */
const UPDATES_WANTED = 4;

export function checkUpstreamGrpc(g: GeyserSourceConfig | undefined, clusterRpc: string | undefined, timeoutMs: number): Promise<Finding> {
  const id = 'upstream-grpc';
  if (g === undefined) return Promise.resolve(skip(id, 'no upstream.grpc: slots come from PubSub and getSlot polling'));
  const shown = urlForLog(g.url);
  const wait = Math.min(WS_WAIT_MS, timeoutMs);
  return new Promise((resolve) => {
    let newest = -1;
    let updates = 0;
    let lastDown = '';
    let settled = false;
    const t0 = performance.now();
    const finish = async (): Promise<void> => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.close();
      if (newest < 0) {
        const why = lastDown === '' ? `no slot update in ${wait} ms` : `no slot update in ${wait} ms (${lastDown})`;
        resolve(fail(id, `${shown}: ${why}`, 'check upstream.grpc.url (http:// for plaintext, https:// for TLS) and upstream.grpc.xToken with your provider', { url: shown }));
        return;
      }
      const firstMs = Math.round(performance.now() - t0);
      if (clusterRpc === undefined) {
        resolve(pass(id, `${shown}: Subscribe delivered slot ${newest} after ${firstMs} ms`, { url: shown, slot: newest }));
        return;
      }
      try {
        const rpcSlot = (await rpcCall<number>(clusterRpc, 'getSlot', [{ commitment: 'processed' }], timeoutMs)).result;
        const behind = rpcSlot - newest;
        const data = { url: shown, slot: newest, rpcSlot, behindSlots: behind };
        if (behind >= g.lagSlots) {
          resolve(warn(id, `${shown}: its newest slot ${newest} is ${behind} behind the RPC's processed ${rpcSlot}`, 'the stream lags: PubSub will lead while it does; use an endpoint nearer the cluster', data));
        } else resolve(pass(id, `${shown}: Subscribe delivered slot ${newest} after ${firstMs} ms, ${Math.max(0, behind)} behind the RPC's processed slot`, data));
      } catch {
        resolve(pass(id, `${shown}: Subscribe delivered slot ${newest} after ${firstMs} ms (the RPC's slot was not available to compare)`, { url: shown, slot: newest }));
      }
    };
    const stream = new GeyserSlotStream({
      url: g.url,
      xToken: g.xToken,
      onSlot: (slot) => {
        updates++;
        if (slot > newest) newest = slot;
        if (updates >= UPDATES_WANTED) void finish();
      },
      onState: (s) => {
        if (s.kind === 'down') lastDown = s.reason;
      },
      stallMs: () => wait * 2,
    });
    const timer = setTimeout(() => void finish(), wait);
    stream.start();
  });
}
