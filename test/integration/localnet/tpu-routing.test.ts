// A QUIC client (the project's src/quic client, with its own identity certificate) sending signed transactions
// straight to validators' tpuQuic: the current leader lands it, a validator that is neither the current nor the next
// leader drops it (counted as not_leader). Also slotSubscribe through web3.js.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { until } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';

let ln: Localnet;
let conn: Connection;
let identity: IdentityCertificate;
const payer = Keypair.generate();
const SLOT_MS = 100;

function connect(tpuQuic: string): Promise<QuicClientConnection> {
  const [host, port] = tpuQuic.split(':');
  return QuicClientConnection.connect({ host, port: Number(port), identity });
}

/** Wait for the first slot of a leader window, so the leader keeps the window for ~4 slots. */
async function windowStart(): Promise<number> {
  for (;;) {
    const s = ln.clock.current;
    if (s % 4 === 0) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
}

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 4, stakes: [100n, 100n, 100n, 100n].map((x) => x * 1_000_000_000n), graceMs: 20 });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  identity = await createRandomIdentityCertificate();
  const sig = await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  expect(sig).toBeTypeOf('string');
});

afterAll(async () => {
  await ln?.stop();
});

describe('TPU routing on the localnet', () => {
  it('the current leader lands a transaction sent to its tpuQuic; a non-leader drops one', async () => {
    const conns = new Map<string, QuicClientConnection>();
    for (const v of ln.validators) conns.set(v.identity, await connect(v.tpuQuic));
    try {
      const toLeader = await signedTransfer(conn, payer);
      const toOther = await signedTransfer(conn, payer);
      const slot = await windowStart();
      const leader = ln.schedule.leaderAt(slot);
      const next = ln.schedule.leaderAt(ln.schedule.nextLeaderChange(slot));
      const other = ln.validators.find((v) => v.identity !== leader && v.identity !== next)!.identity;
      const droppedBefore = ln.landings.countersOf(other).dropped.not_leader;

      expect(conns.get(leader)!.tryWrite(toLeader.bytes)).toBe('written');
      expect(conns.get(other)!.tryWrite(toOther.bytes)).toBe('written');

      await until(() => ln.bank.record(toLeader.signature) !== undefined, 2_000);
      await until(() => ln.landings.countersOf(other).dropped.not_leader > droppedBefore, 2_000);
      await new Promise((r) => setTimeout(r, 3 * SLOT_MS));
      expect(ln.bank.record(toOther.signature)).toBeUndefined();

      const page = ln.landings.page(0, 10_000).records;
      const rec = page.find((r) => r.signature === toLeader.signature)!;
      expect(rec.validator).toBe(leader);
      expect(rec.sender).toBe(identity.identity);
      expect(ln.schedule.leaderAt(rec.slot)).toBe(leader);
      expect(page.some((r) => r.signature === toOther.signature)).toBe(false);
      const st = await conn.getSignatureStatuses([toLeader.signature, toOther.signature]);
      expect(st.value[0]?.err).toBeNull();
      expect(st.value[1]).toBeNull();
    } finally {
      for (const c of conns.values()) c.close();
    }
  });

  it('slotSubscribe delivers consecutive slots', async () => {
    const seen: number[] = [];
    const id = conn.onSlotChange((s) => seen.push(s.slot));
    await until(() => seen.length >= 3, 3_000);
    await conn.removeSlotChangeListener(id);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1] + 1);
  });
});
