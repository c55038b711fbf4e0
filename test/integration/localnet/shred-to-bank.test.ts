// When the localnet's RPC node tells of a slot (src/localnet/shred-to-bank.ts): a `slotrelay localnet` process with
// --shred-to-bank-ms, read by the unchanged @triton-one/yellowstone-grpc client and a PubSub WebSocket at once. For
// the same slots, Geyser's FIRST_SHRED_RECEIVED comes about that delay before CREATED_BANK and before PubSub's
// slotNotification (Agave notifies slotSubscribe when replay creates the bank), in both consensus modes.
import * as yellowstone from '@triton-one/yellowstone-grpc';
import { SlotStatus, type SubscribeRequest, type SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { waitFor } from '../../helpers/wait-for.js';

type ClientClass = (typeof yellowstone)['default']['default'];
const Client = ((yellowstone.default as { default?: ClientClass }).default ?? yellowstone.default) as ClientClass;

const SLOT_MS = 250;
const DELAY_MS = 60;
/** Generous: two processes' event loops on a loaded CI machine sit between the server's timer and our clock. */
const TOLERANCE_MS = 25;
const SLOTS = 12;

function request(part: Partial<SubscribeRequest>): SubscribeRequest {
  return { accounts: {}, slots: {}, transactions: {}, transactionsStatus: {}, blocks: {}, blocksMeta: {}, entry: {}, accountsDataSlice: [], ...part };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

describe.each(['alpenglow', 'tower'])('slotrelay localnet --shred-to-bank-ms (%s)', (consensus) => {
  it('Geyser FIRST_SHRED_RECEIVED comes the delay before CREATED_BANK and before the PubSub slotNotification of the same slot', async () => {
    const child = spawn(
      process.execPath,
      ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--grpc-port', '0', '--slot-ms', String(SLOT_MS), '--consensus', consensus, '--validators', '2', '--shred-to-bank-ms', String(DELAY_MS)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const ready = JSON.parse((await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next()).value as string);
      expect(ready.shredToBankMs).toBe(DELAY_MS);
      const grpc = new Client(ready.grpcUrl, undefined, undefined);
      await grpc.connect();
      const stream = await grpc.subscribe();
      const statuses = new Map<number, { status: number; at: number }[]>();
      stream.on('data', (u: SubscribeUpdate) => {
        if (u.slot === undefined) return;
        const slot = Number(u.slot.slot);
        let list = statuses.get(slot);
        if (list === undefined) statuses.set(slot, (list = []));
        list.push({ status: u.slot.status, at: performance.now() });
      });
      await new Promise<void>((resolve, reject) =>
        stream.write(request({ slots: { all: { interslotUpdates: true } } }), (err?: Error | null) => (err ? reject(err) : resolve())),
      );
      const ws = await PubsubClient.open(ready.wsUrl);
      const notified = new Map<number, number>();
      ws.ws.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (m.method === 'slotNotification' && !notified.has(m.params.result.slot)) notified.set(m.params.result.slot, performance.now());
      });
      ws.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });

      // Slots both sources saw from their first update on (the first slot each saw may be cut in half).
      const compared = (): number[] => {
        const both = [...notified.keys()].filter((s) => statuses.get(s)?.[0]?.status === SlotStatus.SLOT_FIRST_SHRED_RECEIVED);
        return both.slice(1);
      };
      await waitFor(`${SLOTS} slots on both`, () => compared().length >= SLOTS, Boolean, (SLOTS + 10) * SLOT_MS);
      stream.destroy();
      ws.close();

      const pubsubLater: number[] = [];
      const bankLater: number[] = [];
      for (const slot of compared()) {
        const list = statuses.get(slot)!;
        // Each slot's statuses in order: the first shred, then its bank.
        expect(list.slice(0, 2).map((x) => x.status), `slot ${slot}`).toEqual([SlotStatus.SLOT_FIRST_SHRED_RECEIVED, SlotStatus.SLOT_CREATED_BANK]);
        pubsubLater.push(notified.get(slot)! - list[0].at);
        bankLater.push(list[1].at - list[0].at);
      }
      const detail = `pubsub later by ${pubsubLater.map((x) => x.toFixed(1)).join(', ')} ms`;
      expect(median(pubsubLater), detail).toBeGreaterThanOrEqual(DELAY_MS - TOLERANCE_MS);
      expect(median(bankLater)).toBeGreaterThanOrEqual(DELAY_MS - TOLERANCE_MS);
      // Most slots on their own, not just the median (a stall may shrink one or two).
      expect(pubsubLater.filter((x) => x >= DELAY_MS - TOLERANCE_MS).length, detail).toBeGreaterThanOrEqual(Math.ceil(pubsubLater.length * 0.75));
      // The same slot: well within one slot time.
      expect(median(pubsubLater)).toBeLessThan(SLOT_MS);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }, 30_000);
});
