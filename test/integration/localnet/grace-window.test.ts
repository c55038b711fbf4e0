// The next leader's grace window, driven through a real QUIC client (src/quic) against the localnet's listeners:
// a transaction sent only to the NEXT leader within graceMs of its first slot is held and lands in that slot; one
// sent to the same validator earlier than that is dropped (not_leader) and never lands, even once it leads.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { QuicClientConnection, createRandomIdentityCertificate } from '../../../src/quic/index.js';
import { until } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';

const SLOT_MS = 400;
const GRACE_MS = 200;
/** Sent this long before the next leader's first slot: inside the window (grace 200 ms), 100 ms of margin each way. */
const INSIDE_MS = 100;
/** And this long before it: outside the window by 200 ms. */
const OUTSIDE_MS = 400;

let ln: Localnet;
let conn: Connection;
const payer = Keypair.generate();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolve at monotonic time `ns` (coarse sleep, then short hops that let the listeners' I/O run). */
async function at(ns: bigint): Promise<void> {
  for (;;) {
    const left = Number(ns - process.hrtime.bigint()) / 1e6;
    if (left <= 0) return;
    await (left > 5 ? sleep(left - 4) : new Promise((r) => setImmediate(r)));
  }
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 4, stakes: [1n, 1n, 1n, 1n].map((x) => x * 100_000_000_000n), graceMs: GRACE_MS });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  const sig = await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  expect(sig).toBeTypeOf('string');
  await until(() => ln.bank.status(sig) !== undefined, 3_000);
});

afterAll(async () => {
  await ln?.stop();
});

describe('next-leader grace window over QUIC', () => {
  it('holds a transaction that reaches the next leader within graceMs and lands it in its first slot; drops an earlier one', async () => {
    const identity = await createRandomIdentityCertificate();
    const early = await signedTransfer(conn, payer, 1_000_001);
    const inside = await signedTransfer(conn, payer, 1_000_002);

    // The next leader change at least OUTSIDE_MS + a margin away, and the validator that leads from there.
    let change = ln.schedule.nextLeaderChange(ln.clock.current);
    while (ln.clock.slotStartNs(change) - process.hrtime.bigint() < BigInt((OUTSIDE_MS + 150) * 1e6)) change = ln.schedule.nextLeaderChange(change);
    const next = ln.schedule.leaderAt(change);
    const v = ln.validators.find((x) => x.identity === next)!;
    const [host, port] = v.tpuQuic.split(':');
    const c = await QuicClientConnection.connect({ host, port: Number(port), identity });
    try {
      const startNs = ln.clock.slotStartNs(change);
      const before = { ...ln.landings.countersOf(next), dropped: { ...ln.landings.countersOf(next).dropped } };

      await at(startNs - BigInt(OUTSIDE_MS * 1e6));
      expect(ln.schedule.leaderAt(ln.clock.current)).not.toBe(next);
      expect(c.tryWrite(early.bytes)).toBe('written');
      await until(() => ln.landings.countersOf(next).dropped.not_leader === before.dropped.not_leader + 1, 150);

      await at(startNs - BigInt(INSIDE_MS * 1e6));
      expect(ln.schedule.leaderAt(ln.clock.current)).not.toBe(next);
      expect(c.tryWrite(inside.bytes)).toBe('written');
      await until(() => ln.landings.countersOf(next).buffered === before.buffered + 1, 90);
      expect(ln.bank.status(inside.signature)).toBeUndefined(); // held, not executed before its leader's slot

      await until(() => ln.bank.status(inside.signature) !== undefined, 2 * SLOT_MS);
      const rec = ln.landings.page(0, 10_000).records.find((r) => r.signature === inside.signature)!;
      expect(rec).toMatchObject({ validator: next, slot: change, sender: identity.identity });
      expect(rec.arrivalNs).toBeLessThan(startNs);
      expect(rec.arrivalNs).toBeGreaterThanOrEqual(startNs - BigInt(GRACE_MS * 1e6));
      expect(ln.landings.countersOf(next).landed).toBe(before.landed + 1);

      // The early one is gone for good, though its target now leads.
      await sleep(2 * SLOT_MS);
      expect(ln.schedule.leaderAt(ln.clock.current)).toBe(next);
      expect(ln.bank.status(early.signature)).toBeUndefined();
      expect(ln.landings.page(0, 10_000).records.some((r) => r.signature === early.signature)).toBe(false);
      const st = await conn.getSignatureStatuses([inside.signature, early.signature]);
      expect(st.value[0]?.slot).toBe(change);
      expect(st.value[1]).toBeNull();
    } finally {
      c.close();
    }
  });
});
