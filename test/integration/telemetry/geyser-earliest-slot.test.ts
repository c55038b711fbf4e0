// A relay on upstream.grpc aims at the leader of a slot from the slot's earliest Geyser status: on a localnet whose
// RPC node creates each bank 120 ms after the slot's first shred (src/localnet/shred-to-bank.ts), the relay's
// getLeaderSlots `snapshotSlot` reaches slot N well before PubSub's slotNotification for N reaches a client of the
// same node. A relay that waited for CREATED_BANK, PROCESSED or slotSubscribe would show N no sooner than PubSub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const SLOT_MS = 250;
const SHRED_TO_BANK_MS = 120;
/** Generous: the relay's telemetry thread, its front and this process's polling sit between the stream and us. */
const TOLERANCE_MS = 50;
const POLL_MS = 5;
const SLOTS = 10;
let ln: Localnet;
let relay: RelayHandle;

async function snapshotSlot(): Promise<number | null> {
  const res = await fetch(relay.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLeaderSlots', params: [ln.clock.current, 1] }),
  });
  const j = (await res.json()) as { result?: { snapshotSlot: number }; error?: { data?: { snapshotSlot?: number } } };
  return j.result?.snapshotSlot ?? j.error?.data?.snapshotSlot ?? null;
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 2, grpcPort: 0, shredToBankMs: SHRED_TO_BANK_MS });
  relay = await startRelay({ upstream: { rpcUrl: ln.rpcUrl, grpc: { url: ln.grpcUrl } }, routes: { rpc: { endpoints: [ln.rpcUrl] } } });
});

afterAll(async () => {
  await relay?.stop();
  await ln?.stop();
});

describe('upstream.grpc: leader targeting from the earliest slot status', () => {
  it('the relay\'s snapshot reaches each slot about the shred-to-bank gap before PubSub tells of it', async () => {
    await waitFor('the relay on the stream', snapshotSlot, (s) => s !== null && s >= ln.clock.current - 1, 20_000);
    const ws = await PubsubClient.open(ln.wsUrl);
    const pubsubAt = new Map<number, number>();
    ws.ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.method === 'slotNotification' && !pubsubAt.has(m.params.result.slot)) pubsubAt.set(m.params.result.slot, performance.now());
    });
    ws.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
    const relayAt = new Map<number, number>();
    const first = ln.clock.current + 2;
    try {
      while (!pubsubAt.has(first + SLOTS)) {
        const s = await snapshotSlot();
        const now = performance.now();
        if (s !== null) for (let n = first; n <= s; n++) if (!relayAt.has(n)) relayAt.set(n, now);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } finally {
      ws.close();
    }
    const earlier: number[] = [];
    for (let n = first; n < first + SLOTS; n++) {
      const r = relayAt.get(n);
      const p = pubsubAt.get(n);
      if (r !== undefined && p !== undefined) earlier.push(p - r);
    }
    expect(earlier.length).toBeGreaterThanOrEqual(SLOTS - 2);
    const sorted = [...earlier].sort((a, b) => a - b);
    const detail = `relay earlier than PubSub by ${earlier.map((x) => x.toFixed(0)).join(', ')} ms`;
    expect(sorted[Math.floor(sorted.length / 2)], detail).toBeGreaterThanOrEqual(SHRED_TO_BANK_MS - TOLERANCE_MS);
  }, 60_000);
});
