// The TPU gate keeps its own copy of what it executes or holds: listeners hand it the QUIC endpoint's view of a
// reused buffer (copy: false), so bytes overwritten after submit() must not reach the bank, now or when a held
// transaction runs at the start of its leader's window.
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Bank } from '../../../src/localnet/bank.js';
import { BlockProducer } from '../../../src/localnet/block-producer.js';
import { LandingLog } from '../../../src/localnet/landings.js';
import { LeaderSchedule } from '../../../src/localnet/leader-schedule.js';
import { PrioritizationFees } from '../../../src/localnet/prioritization-fees.js';
import { SlotClock } from '../../../src/localnet/slot-clock.js';
import { TpuGate } from '../../../src/localnet/tpu-gate.js';

const clocks: SlotClock[] = [];
afterEach(() => {
  for (const c of clocks.splice(0)) c.stop();
});

function setup(graceMs: number) {
  const ids = ['A', 'B', 'C'].map(() => Keypair.generate().publicKey.toBase58());
  const bank = new Bank({ slotMs: 60_000 });
  const landings = new LandingLog(ids);
  const producer = new BlockProducer(bank, new PrioritizationFees(), landings);
  const schedule = new LeaderSchedule(ids.map((identity) => ({ identity, stake: 1n })), 8192, 'gate-test');
  const clock = new SlotClock(60_000); // slot 0 for the whole test
  clock.start();
  clocks.push(clock);
  const gate = new TpuGate(schedule, clock, producer, landings, { graceMs, maxTransactionBytes: 1232 });
  const payer = Keypair.generate();
  expect(bank.airdrop(payer.publicKey, 10_000_000_000n).landed).toBe(true);
  const wire = (lamports: number): Uint8Array => {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: bank.blockhashAt(0).blockhash, lastValidBlockHeight: 0 });
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }));
    tx.sign(payer);
    return tx.serialize();
  };
  const leader = schedule.leaderAt(0);
  const nextSlot = schedule.nextLeaderChange(0);
  return { bank, producer, gate, landings, wire, leader, nextSlot, next: schedule.leaderAt(nextSlot) };
}

/** The transaction inside a larger reused buffer, as the endpoint hands it over. */
function viewOf(tx: Uint8Array): { view: Uint8Array; scratch: Uint8Array } {
  const scratch = new Uint8Array(2048);
  scratch.set(tx, 100);
  return { view: scratch.subarray(100, 100 + tx.length), scratch };
}

const arrival = (validatorIdentity: string) => ({ validatorIdentity, senderIdentity: null, arrivalNs: process.hrtime.bigint() });

describe('TPU gate copies what it keeps', () => {
  it('executes the current leader\'s transaction from its own copy', () => {
    const t = setup(0);
    const tx = t.wire(1_000_001);
    const { view, scratch } = viewOf(tx);
    expect(t.gate.submit(view, arrival(t.leader))).toBe('landed');
    scratch.fill(0);
    const sig = t.landings.page(0, 10).records[0].signature;
    expect(Buffer.from(t.bank.record(sig)!.tx)).toEqual(Buffer.from(tx));
  });

  it('holds a next-leader transaction from its own copy and runs it when that leader\'s window starts', () => {
    const t = setup(10 * 60_000 * 8); // grace longer than the wait for the next window
    const tx = t.wire(1_000_002);
    const { view, scratch } = viewOf(tx);
    expect(t.gate.submit(view, arrival(t.next))).toBe('buffered');
    scratch.fill(7); // the endpoint reuses its buffer for the next stream
    t.producer.startSlot(t.nextSlot);
    t.gate.onSlot(t.nextSlot);
    const counters = t.landings.countersOf(t.next);
    expect(counters).toMatchObject({ received: 1, buffered: 1, landed: 1 });
    const rec = t.landings.page(0, 10).records[0];
    expect(rec).toMatchObject({ validator: t.next, slot: t.nextSlot });
    expect(Buffer.from(t.bank.record(rec.signature)!.tx)).toEqual(Buffer.from(tx));
  });

  it('drops a transaction for a validator that leads neither now nor next (not_leader), and one outside the grace window', () => {
    const t = setup(0);
    const other = [...t.landings.counters.keys()].find((v) => v !== t.leader && v !== t.next)!;
    expect(t.gate.submit(t.wire(5), arrival(other))).toBe('not_leader');
    expect(t.gate.submit(t.wire(6), arrival(t.next))).toBe('not_leader');
  });
});
