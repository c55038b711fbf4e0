// Competing senders on the localnet (localnet process, main thread; a 10 ms send tick, per-transaction signing is
// warm). Other senders than the relay that load the validators' TPUs the way searchers and bots load a leader on
// mainnet, so the relay competes for the leader's stream credit and block space:
// - each competitor is a QUIC identity of its own (seeded; staked when it has a stake, counted in the QoS stake
//   table like any staked peer) with `connections` connections per validator, opened by the relay's own egress
//   connection worker (the same client code, queue bound and stale deadline);
// - it sends `tps` signed transfers per second (a compute-unit price of its own, so fee ordering shows in who lands
//   when the block is full: tpu-gate.ts blockCapacity) to the current leader's TPU, only when it is "hot": a hot
//   leader (`validator` k: while k is the leader, and in the slot before its window) and/or a hot window (`everySlots`
//   N, `hotSlots` M: slots where slot % N < M);
// - what it could not write (no stream credit within two slots, queue full) is counted, never retried.
// Transactions: a legacy transfer from the competitor's funded payer (compute-unit limit 450 and its price), the
// message compiled once per blockhash and the transfer amount patched per transaction (unique signatures), signed
// with node:crypto's Ed25519.
import { createHash, createPrivateKey, sign as edSign, type KeyObject } from 'node:crypto';
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { ConnectionWorker } from '../egress/quic/connection-worker.js';
import { createLogger } from '../log/logger.js';
import { KEEP_ALIVE_MS, MAX_IDLE_TIMEOUT_MS, createIdentityCertificate, type IdentityCertificate } from '../quic/index.js';
import type { Bank } from './bank.js';
import { NUM_CONSECUTIVE_LEADER_SLOTS, type LeaderSchedule } from './leader-schedule.js';
import type { SlotClock } from './slot-clock.js';
import type { TpuTarget } from './rpc-tpu-sender.js';

/** One competing sender (config: localnet.competitors[]). */
export interface LocalnetCompetitorOptions {
  /** Label in counters; default `competitor-<i>`. */
  readonly name?: string;
  /** Transactions per second while hot. */
  readonly tps: number;
  /** Stake in lamports (QoS stake table); 0 / absent = unstaked. */
  readonly stake?: bigint;
  /** Hot leader: validator index (0 = largest stake) whose leader slots (and the slot before) it sends in. */
  readonly validator?: number;
  /** Hot window: sends only in slots where slot % everySlots < hotSlots. */
  readonly everySlots?: number;
  readonly hotSlots?: number;
  /** Compute-unit price (micro-lamports per CU); default 0. */
  readonly microLamportsPerCu?: number;
  /** Connections per validator; default 1. */
  readonly connections?: number;
}

export interface CompetitorCounters {
  readonly name: string;
  readonly identity: string;
  readonly staked: boolean;
  /** Transactions built and handed to a connection. */
  generated: number;
  /** Written to a stream. */
  sent: number;
  /** Not written: no stream credit before the stale deadline, queue full, no connection. */
  notSent: number;
  /** Slots it was hot in. */
  hotSlots: number;
}

const TICK_MS = 10;
const CU_LIMIT = 450;
const PAYER_LAMPORTS = 10n ** 17n;

function seeded(seed: string, what: string, i: number): Keypair {
  return Keypair.fromSeed(createHash('sha256').update(`slotrelay-localnet/${seed}/${what}/${i}`).digest());
}

/** The identity a competitor will have (before the listeners start: the stake table needs it). */
export function competitorIdentity(seed: string, i: number): Keypair {
  return seeded(seed, 'competitor', i);
}

interface Sender {
  readonly o: LocalnetCompetitorOptions;
  readonly c: CompetitorCounters;
  readonly identity: IdentityCertificate;
  readonly payer: Keypair;
  readonly payerKey: KeyObject;
  readonly to: PublicKey;
  readonly workers: Map<string, ConnectionWorker[]>;
  acc: number;
  next: number;
  template: { blockhash: string; msg: Buffer } | null;
  lastHotSlot: number;
}

export class Competitors {
  readonly counters: CompetitorCounters[] = [];
  private readonly senders: Sender[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastMs = 0;
  private readonly log = createLogger('silent', 'localnet-competitor');

  private constructor(
    private readonly targets: ReadonlyMap<string, TpuTarget>,
    private readonly validators: readonly string[],
    private readonly schedule: LeaderSchedule,
    private readonly clock: SlotClock,
    private readonly bank: Bank,
  ) {}

  static async start(
    opts: readonly LocalnetCompetitorOptions[],
    seed: string,
    targets: ReadonlyMap<string, TpuTarget>,
    validators: readonly string[],
    schedule: LeaderSchedule,
    clock: SlotClock,
    bank: Bank,
  ): Promise<Competitors> {
    const cs = new Competitors(targets, validators, schedule, clock, bank);
    for (let i = 0; i < opts.length; i++) {
      const o = opts[i];
      if (!(o.tps > 0)) throw new RangeError(`competitor ${i}: tps must be positive`);
      if (o.validator !== undefined && !(o.validator >= 0 && o.validator < validators.length)) throw new RangeError(`competitor ${i}: no validator ${o.validator}`);
      const kp = competitorIdentity(seed, i);
      const payer = seeded(seed, 'competitor-payer', i);
      const to = seeded(seed, 'competitor-to', i).publicKey;
      bank.createSystemAccount(payer.publicKey.toBytes(), PAYER_LAMPORTS);
      bank.createSystemAccount(to.toBytes(), 1_000_000_000n);
      const payerKey = createPrivateKey({
        key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(payer.secretKey.subarray(0, 32))]),
        format: 'der',
        type: 'pkcs8',
      });
      const c: CompetitorCounters = {
        name: o.name ?? `competitor-${i}`,
        identity: kp.publicKey.toBase58(),
        staked: (o.stake ?? 0n) > 0n,
        generated: 0,
        sent: 0,
        notSent: 0,
        hotSlots: 0,
      };
      cs.counters.push(c);
      cs.senders.push({
        o,
        c,
        identity: await createIdentityCertificate(kp.secretKey),
        payer,
        payerKey,
        to,
        workers: new Map(),
        acc: 0,
        next: 1,
        template: null,
        lastHotSlot: -1,
      });
    }
    cs.lastMs = performance.now();
    cs.timer = setInterval(() => cs.tick(), TICK_MS);
    return cs;
  }

  /** The validator a sender aims at now, or null when it is not hot. */
  private hotTarget(o: LocalnetCompetitorOptions, slot: number): string | null {
    if (o.everySlots !== undefined && slot % o.everySlots >= (o.hotSlots ?? 1)) return null;
    const leader = this.schedule.leaderAt(slot);
    if (o.validator === undefined) return leader;
    const k = this.validators[o.validator];
    if (leader === k) return k;
    // The slot before its window: a sender aims at the next leader a little early (the gate holds it).
    const next = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS) + NUM_CONSECUTIVE_LEADER_SLOTS;
    return next - slot === 1 && this.schedule.leaderAt(next) === k ? k : null;
  }

  private tick(): void {
    const now = performance.now();
    const dt = Math.min(100, now - this.lastMs);
    this.lastMs = now;
    const slot = this.clock.current;
    for (const s of this.senders) {
      const target = this.hotTarget(s.o, slot);
      if (target === null) {
        s.acc = 0;
        continue;
      }
      if (s.lastHotSlot !== slot) {
        s.lastHotSlot = slot;
        s.c.hotSlots++;
      }
      s.acc += (s.o.tps * dt) / 1000;
      const n = Math.floor(s.acc);
      s.acc -= n;
      for (let k = 0; k < n; k++) this.sendOne(s, target, slot);
    }
  }

  private sendOne(s: Sender, validator: string, slot: number): void {
    const w = this.worker(s, validator);
    if (w === null) return;
    const tx = this.build(s, slot);
    s.c.generated++;
    const r = w.send(tx);
    if (typeof r === 'string') this.count(s, r);
    else void r.then((o) => this.count(s, o));
  }

  private count(s: Sender, outcome: string): void {
    if (outcome === 'sent') s.c.sent++;
    else s.c.notSent++;
  }

  private worker(s: Sender, validator: string): ConnectionWorker | null {
    const t = this.targets.get(validator);
    if (t === undefined) return null;
    let list = s.workers.get(validator);
    if (list === undefined) {
      list = [];
      s.workers.set(validator, list);
    }
    const want = Math.max(1, s.o.connections ?? 1);
    // Round robin over the sender's connections to this validator; a closed one is replaced on its turn.
    const i = s.c.generated % want;
    let w = list[i];
    if (w === undefined || w.state === 'closed') {
      w = new ConnectionWorker({
        host: t.host,
        port: t.port,
        label: `${s.c.name}->${validator}`,
        identity: s.identity,
        maxIdleTimeoutMs: MAX_IDLE_TIMEOUT_MS,
        keepAliveMs: KEEP_ALIVE_MS,
        connectTimeoutMs: 2_000,
        reconnect: false,
        retryMinMs: 0,
        retryMaxMs: 0,
        maxQueued: 256,
        // Not written within two slots: too late for the hot leader, counted notSent.
        staleAfterMs: () => 2 * this.clock.slotMs,
        log: this.log,
      });
      list[i] = w;
    }
    return w;
  }

  private build(s: Sender, slot: number): Uint8Array {
    const { blockhash } = this.bank.blockhashAt(slot);
    if (s.template === null || s.template.blockhash !== blockhash) {
      const t = new Transaction({ feePayer: s.payer.publicKey, blockhash, lastValidBlockHeight: slot + 150 });
      t.add(ComputeBudgetProgram.setComputeUnitLimit({ units: CU_LIMIT }));
      if ((s.o.microLamportsPerCu ?? 0) > 0) t.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: s.o.microLamportsPerCu! }));
      t.add(SystemProgram.transfer({ fromPubkey: s.payer.publicKey, toPubkey: s.to, lamports: 1 }));
      s.template = { blockhash, msg: Buffer.from(t.serializeMessage()) };
    }
    const msg = Buffer.from(s.template.msg);
    // The transfer's lamports are the last 8 bytes of the message: a fresh amount, a fresh signature.
    msg.writeBigUInt64LE(BigInt(s.next++), msg.length - 8);
    const sig = edSign(null, msg, s.payerKey);
    const wire = new Uint8Array(1 + 64 + msg.length);
    wire[0] = 1;
    wire.set(sig, 1);
    wire.set(msg, 65);
    return wire;
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const all: Promise<void>[] = [];
    for (const s of this.senders) for (const list of s.workers.values()) for (const w of list) all.push(w.close(0));
    await Promise.all(all);
  }
}
