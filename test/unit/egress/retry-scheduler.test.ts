// Retry queue + scheduler + status poller with in-process routes and a scripted status source (the HTTP paths are
// covered by test/integration/egress/retry-*.test.ts). Intervals are tens of ms to keep the suite fast.
import { describe, expect, it } from 'vitest';
import { configSchema, type ConfigInput } from '../../../src/config/schema.js';
import { signatureAndBlockhashOffsets } from '../../../src/tx/wire-offsets.js';
import { RetryScheduler } from '../../../src/egress/rebroadcast/retry-scheduler.js';
import { DueHeap } from '../../../src/egress/rebroadcast/due-heap.js';
import type { EgressOutcome, EgressRoute, TxView } from '../../../src/egress/contract/route.js';
import { MAX_SIGNATURES_PER_CALL, SignatureStatusPoller, type StatusRpc } from '../../../src/egress/rebroadcast/signature-status-poller.js';
import { createLogger } from '../../../src/log/logger.js';
import { EGRESS_OUTCOMES, RETRY_OUTCOMES, ROUTE_IDS, WORKER_COUNTER_SLOTS, rebroadcastCounterIndex, retryCounterIndex, type RetryOutcome } from '../../../src/shm/layout.js';
import { createRing, RingConsumer, RingProducer } from '../../../src/shm/ring.js';
import { legacyTransfer, v0Transfer, type SignedTx } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';

const log = createLogger('silent', 'test');
const RPC = 1 << ROUTE_IDS.rpc;
const JITO = 1 << ROUTE_IDS.jito;

class RecordingRoute implements EgressRoute {
  readonly seen: Buffer[] = [];
  answer: EgressOutcome = 'sent';
  constructor(
    readonly id: number,
    readonly name: 'rpc' | 'jito',
    private readonly async = false,
  ) {}
  send(tx: TxView): Promise<EgressOutcome> | EgressOutcome {
    this.seen.push(Buffer.from(Buffer.from(tx.sab, tx.byteOffset, tx.length)));
    return this.async ? new Promise((r) => setTimeout(() => r(this.answer), 2)) : this.answer;
  }
  async close(): Promise<void> {}
}

/** Scripted upstream: statuses by signature, blockhash validity, call log. */
class ScriptedRpc implements StatusRpc {
  readonly landed = new Set<string>();
  readonly calls: { method: string; params: readonly unknown[] }[] = [];
  blockhashValid: boolean | 'error' = 'error';
  statusError = false;
  async call<T>(method: string, params: readonly unknown[]): Promise<T> {
    this.calls.push({ method, params });
    if (method === 'getSignatureStatuses') {
      if (this.statusError) throw new Error('upstream getSignatureStatuses error -32601: Method not found');
      const sigs = params[0] as string[];
      return { context: { slot: 1 }, value: sigs.map((s) => (this.landed.has(s) ? { slot: 1, confirmations: 0, err: null, confirmationStatus: 'confirmed' } : null)) } as T;
    }
    if (method === 'isBlockhashValid') {
      if (this.blockhashValid === 'error') throw new Error('upstream isBlockhashValid error -32601: Method not found');
      return { context: { slot: 1 }, value: this.blockhashValid } as T;
    }
    throw new Error(`unexpected ${method}`);
  }
}

function setup(retries: ConfigInput['retries'] = {}, rpc: ScriptedRpc | null = new ScriptedRpc(), asyncRoutes = false) {
  const config = configSchema.parse({ retries: { intervalMs: 20, statusPollMs: 10, ...retries }, log: { level: 'silent' } });
  const rpcRoute = new RecordingRoute(ROUTE_IDS.rpc, 'rpc', asyncRoutes);
  const jito = new RecordingRoute(ROUTE_IDS.jito, 'jito', asyncRoutes);
  const counters = new Float64Array(WORKER_COUNTER_SLOTS);
  const routes = [rpcRoute, null, jito, null];
  const sched = new RetryScheduler({ config, routes, counters, log, poller: rpc === null ? null : new SignatureStatusPoller(rpc) });
  const retry = (o: RetryOutcome) => counters[retryCounterIndex(RETRY_OUTCOMES.indexOf(o))];
  const rebroadcasts = (route: number, o: EgressOutcome = 'sent') => counters[rebroadcastCounterIndex(route, EGRESS_OUTCOMES.indexOf(o))];
  return { sched, rpcRoute, jito, rpc, retry, rebroadcasts };
}

/** The tx in a real ring slot; returns the view and the producer (to overwrite the slot afterwards). */
function ringView(tx: SignedTx, maxRetries: number, traceId = 'trace-r'): { view: TxView; overwrite: () => void } {
  const sab = createRing(2, 1232);
  const p = new RingProducer(sab);
  const off = p.reserve();
  tx.bytes.copy(p.bytes, off);
  p.publish(tx.bytes.length, 1, RPC | JITO, maxRetries, performance.timeOrigin + performance.now(), traceId);
  const c = new RingConsumer(sab);
  const slot = c.take();
  const o = c.txOffset(slot);
  return {
    view: { bytes: c.txBytes(slot), sab, byteOffset: o, length: tx.bytes.length, signatureOffset: 1, keyId: 1, maxRetries, traceId, receivedAtMs: c.receivedAtMs(slot) },
    overwrite: () => c.bytes.fill(0xee, o, o + tx.bytes.length),
  };
}

describe('retry scheduler', () => {
  it('maxRetries 0 sends once (nothing queued); -1 takes retries.defaultMaxRetries', () => {
    const { sched, retry } = setup({ defaultMaxRetries: 0 });
    expect(sched.admit(ringView(legacyTransfer(), 0).view, RPC, true)).toBeNull();
    expect(sched.admit(ringView(legacyTransfer(), -1).view, RPC, true)).toBeNull();
    expect(retry('queued')).toBe(0);
    expect(sched.effectiveRetries(-1)).toBe(0);
    expect(setup({ defaultMaxRetries: 7 }).sched.effectiveRetries(-1)).toBe(7);
    sched.close();
  });

  it('rebroadcasts its own copy (the ring slot is reused) maxRetries times, then ends as retries_exhausted', async () => {
    const { sched, rpcRoute, jito, retry, rebroadcasts } = setup({}, null);
    const tx = v0Transfer();
    const { view, overwrite } = ringView(tx, 3);
    expect(sched.admit(view, RPC | JITO, true)).toBe('queued');
    overwrite(); // the consumer released the slot and the producer reused it
    await until(() => retry('dropped:retries_exhausted') === 1);
    expect(rpcRoute.seen).toHaveLength(3);
    expect(jito.seen).toHaveLength(3);
    for (const b of [...rpcRoute.seen, ...jito.seen]) expect(b.equals(tx.bytes)).toBe(true);
    expect(rebroadcasts(ROUTE_IDS.rpc)).toBe(3);
    expect(rebroadcasts(ROUTE_IDS.jito)).toBe(3);
    expect(retry('queued')).toBe(1);
    expect(sched.size).toBe(0);
    sched.close();
  });

  it('stops rebroadcasting once getSignatureStatuses reports the signature confirmed', async () => {
    const { sched, rpcRoute, rpc, retry } = setup({ defaultMaxRetries: -1 }, new ScriptedRpc(), true);
    const tx = legacyTransfer();
    sched.admit(ringView(tx, -1).view, RPC, true);
    await until(() => rpcRoute.seen.length >= 2);
    rpc!.landed.add(tx.signature);
    await until(() => retry('landed') === 1);
    const sends = rpcRoute.seen.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(rpcRoute.seen.length).toBeLessThanOrEqual(sends + 1); // at most one round already under way
    const statusCall = rpc!.calls.find((c) => c.method === 'getSignatureStatuses')!;
    expect(statusCall.params[0]).toEqual([tx.signature]);
    expect(sched.size).toBe(0);
    sched.close();
  });

  it('a full queue sheds with dropped:retry_queue_full; close() ends the rest as dropped:shutdown', () => {
    const { sched, retry } = setup({ maxQueue: 2, intervalMs: 60_000 });
    const answers = [0, 1, 2, 3].map(() => sched.admit(ringView(legacyTransfer(), 5).view, RPC, true));
    expect(answers).toEqual(['queued', 'queued', 'dropped:retry_queue_full', 'dropped:retry_queue_full']);
    expect(retry('queued')).toBe(2);
    expect(retry('dropped:retry_queue_full')).toBe(2);
    sched.close();
    expect(retry('dropped:shutdown')).toBe(2);
    expect(sched.admit(ringView(legacyTransfer(), 5).view, RPC, true)).toBeNull(); // closed: not counted again
  });

  it('expires when isBlockhashValid turns false after being true, or after blockhashTtlMs when the upstream cannot say', async () => {
    const a = setup({ defaultMaxRetries: -1 });
    a.rpc!.blockhashValid = true;
    a.sched.admit(ringView(legacyTransfer(), -1).view, RPC, true);
    await until(() => a.rpc!.calls.some((c) => c.method === 'isBlockhashValid'));
    await new Promise((r) => setTimeout(r, 30));
    a.rpc!.blockhashValid = false;
    await until(() => a.retry('dropped:expired') === 1);
    a.sched.close();

    const b = setup({ defaultMaxRetries: -1, blockhashTtlMs: 80 }); // isBlockhashValid errors: TTL decides
    b.rpc!.statusError = true;
    b.sched.admit(ringView(legacyTransfer(), -1).view, RPC, true);
    const t0 = Date.now();
    await until(() => b.retry('dropped:expired') === 1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(70);
    b.sched.close();
  });

  it('counts a first delivery made by a rebroadcast as recovered', async () => {
    const { sched, retry } = setup({}, null);
    sched.admit(ringView(legacyTransfer(), 1).view, RPC, false);
    await until(() => retry('dropped:retries_exhausted') === 1);
    expect(retry('recovered')).toBe(1);
    sched.close();
  });

  it('a round of a full queue is sent in slices of 64 with the event loop between them, each transaction once', async () => {
    const { sched, rpcRoute, retry, rebroadcasts } = setup({ intervalMs: 40, maxQueue: 1_000 }, null);
    // Everything admitted within one tick comes due at the same tick: the round a fresh transaction waits behind.
    const tx = legacyTransfer(); // one signature 1,000 times: the queue does not dedupe, and signing is not the point
    for (let i = 0; i < 1_000; i++) expect(sched.admit(ringView(tx, 1).view, RPC, true)).toBe('queued');
    const turns: number[] = []; // sends seen at each event-loop turn while the round goes on
    const watch = (): void => {
      turns.push(rpcRoute.seen.length);
      if (rpcRoute.seen.length < 1_000 && turns.length < 1_000_000) setImmediate(watch);
    };
    watch(); // from before the round is due (the first rebroadcasts 40 ms after admission)
    await until(() => retry('dropped:retries_exhausted') === 1_000, 5_000);
    expect(rpcRoute.seen).toHaveLength(1_000); // maxRetries 1: each sent again exactly once
    expect(rebroadcasts(ROUTE_IDS.rpc)).toBe(1_000);
    // The watcher ran between slices: the round did not go out in one piece, and no turn saw more than a slice.
    const steps = turns.slice(1).map((n, i) => n - turns[i]);
    expect(turns.filter((n) => n > 0 && n < 1_000).length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...steps, turns[0])).toBeLessThanOrEqual(64);
    sched.close();
  });

  it('comes due in order of time, whatever the order of admission and rounds', () => {
    const heap = new DueHeap<{ dueAt: number }>();
    const times = Array.from({ length: 500 }, (_, i) => (i * 7919) % 1_000);
    for (const t of times) heap.push({ dueAt: t });
    const out: number[] = [];
    for (let i = 0; i < 250; i++) out.push(heap.pop()!.dueAt);
    for (const t of [3, 999, 500]) heap.push({ dueAt: t });
    while (heap.size > 0) out.push(heap.pop()!.dueAt);
    expect(out.slice(0, 250)).toEqual([...times].sort((a, b) => a - b).slice(0, 250));
    expect(out.slice(250).every((t, i, a) => i === 0 || a[i - 1] <= t)).toBe(true);
    expect(out).toHaveLength(503);
    expect(heap.pop()).toBeUndefined();
  });

  it('the poller asks for at most 256 signatures per call', async () => {
    const rpc = new ScriptedRpc();
    const sigs = Array.from({ length: 600 }, (_, i) => `sig${i}`);
    rpc.landed.add('sig300');
    const res = await new SignatureStatusPoller(rpc).statuses(sigs);
    expect(rpc.calls.map((c) => (c.params[0] as string[]).length)).toEqual([MAX_SIGNATURES_PER_CALL, MAX_SIGNATURES_PER_CALL, 88]);
    expect(res.states.filter((s) => s === 2)).toHaveLength(1);
    expect(res.states[300]).toBe(2);
  });

  it('reads the first signature and the recent blockhash of legacy and v0 transactions', () => {
    for (const tx of [legacyTransfer(), v0Transfer()]) {
      const [sig, hash] = signatureAndBlockhashOffsets(tx.bytes, 0, tx.bytes.length);
      expect(sig).toBe(1);
      expect(tx.bytes.subarray(hash, hash + 32).equals(Buffer.alloc(32, 7))).toBe(true); // the helpers' blockhash
    }
    expect(signatureAndBlockhashOffsets(Buffer.from([5, 1, 2]), 0, 3)).toEqual([-1, -1]);
  });
});

describe('retry scheduler timers follow the measured slot time (docs/slot-time.md)', () => {
  it('unset intervalMs / statusPollMs / blockhashTtlMs: 5, 2.5 and 225 slots at the slot time it is given', async () => {
    const config = configSchema.parse({ retries: {}, log: { level: 'silent' } });
    expect(config.retries.intervalMs).toBeUndefined();
    const rpcRoute = new RecordingRoute(ROUTE_IDS.rpc, 'rpc');
    const counters = new Float64Array(WORKER_COUNTER_SLOTS);
    const rpc = new ScriptedRpc(); // isBlockhashValid errors: the slot-based TTL decides
    const slotMs = 4; // a fast localnet: TTL 900 ms, rebroadcast every 20 ms, status poll every 10 ms
    const sched = new RetryScheduler({ config, routes: [rpcRoute, null, null, null], counters, log, poller: new SignatureStatusPoller(rpc), slotMs: () => slotMs });
    const t0 = performance.now();
    sched.admit(ringView(legacyTransfer(), -1).view, RPC, true);
    await until(() => counters[retryCounterIndex(RETRY_OUTCOMES.indexOf('dropped:expired'))] === 1, 5_000);
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(225 * slotMs - 5);
    expect(took).toBeLessThan(225 * slotMs + 600);
    // ~45 rounds in 900 ms at 20 ms (ticks of 5 ms on a busy box: at least half of them).
    expect(rpcRoute.seen.length).toBeGreaterThanOrEqual(20);
    expect(rpcRoute.seen.length).toBeLessThanOrEqual(46);
    expect(rpc.calls.filter((c) => c.method === 'getSignatureStatuses').length).toBeGreaterThanOrEqual(20);
    sched.close();
  });
});
