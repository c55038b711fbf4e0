// One measured run of one or more route sets (CLI process, main thread; the send loop and status polls are the bench's
// hot part). With several lanes (route sets, each with its relay and routes) the sets are interleaved in the same
// slots: transaction i goes to lane i mod K (round robin) or to a seeded random lane, at K x the per-set rate, so every
// set meets the same stretch of the leader schedule (issue #44 item 1). Per transaction: send through the lane's
// relay's POST /v1/submit with the lane's routes, note each send's time
// and the cluster slot the SlotTracker saw then, poll getSignatureStatuses on the cluster until each is confirmed or
// the tail after the last send ends, then read the relay's receipts (route outcomes) and, on the localnet, the
// landing records (which validator executed it, whose copy, when) and the TPU counters.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { httpJson, rpcCall } from './http.js';
import type { TransferFactory } from './payers.js';
import type { SlotTracker } from './slot-tracker.js';

const SEND_TICK_MS = 2;
/** At most this many sends per loop turn: a late tick catches up over a few turns, never in one long block. */
const MAX_SENDS_PER_TURN = 20;
const STATUS_BATCH = 256;
const RECEIPT_CONCURRENCY = 16;

export interface ReceiptView {
  readonly status: string;
  readonly rebroadcasts: number;
  readonly routes: Record<string, { outcome: string; targets: number }>;
  readonly firstRoute: string | null;
  readonly slotsToLand: number | null;
  /** The relay's reason for a transaction it did not land (issue #26; null: landed, or not known yet). */
  readonly reason?: { readonly code: string; readonly sent: boolean; readonly closeCode: number | null; readonly detail: string | null } | null;
  /** The adaptive routing's decisions and added routes for it (docs/adaptive-routing.md); null: none. */
  readonly adaptive?: { readonly decisions: readonly string[]; readonly addedRoutes: readonly string[] } | null;
  /** The relay's landing times (issue #43: by push, or its poll): unix ms it knew processed / finalized, and slots. */
  readonly landedSlot?: number | null;
  readonly processedAt?: number | null;
  readonly finalizedAt?: number | null;
  readonly finalizedSlot?: number | null;
}

export interface TxRecord {
  readonly seq: number;
  /** The lane (route set) it was assigned to: an index into PhaseOptions.lanes. */
  readonly lane: number;
  readonly signature: string;
  /** Unix ms just before the submit request was written. */
  readonly sentAt: number;
  /** process.hrtime.bigint() at the same moment (comparable with the localnet's executedNs on this host). */
  readonly sentHrNs: bigint;
  /** The cluster slot the tracker had seen when it was sent. */
  readonly sendSlot: number;
  /** HTTP status of the submit answer (0: no answer), and the relay's refusal reason when not accepted. */
  submitStatus: number;
  accepted: boolean;
  refusal?: string;
  submitMs?: number;
  /** From getSignatureStatuses. */
  landedSlot?: number;
  err?: unknown;
  confirmed: boolean;
  /** Unix ms of the poll that first saw a status. */
  statusSeenAt?: number;
  /** Localnet landing record. */
  executedNs?: bigint;
  landedValidator?: string;
  landedSender?: string | null;
  receipt?: ReceiptView;
}

export interface LocalnetCounters {
  readonly validators: Record<string, { received: number; landed: number; dropped: Record<string, number>; rejectedBy: Record<string, number> }>;
  readonly totalLandings: number;
}

export interface PhaseTarget {
  readonly rpcUrl: string;
  readonly relayUrl: string;
  readonly apiKey: string;
  /** The localnet's facade is the cluster: landing records and counters are read. */
  readonly localnet: boolean;
}

/** One route set of a phase: the relay it goes through and the routes each of its transactions names. */
export interface PhaseLane {
  readonly relayUrl: string;
  readonly apiKey: string;
  readonly routes: readonly string[];
}

/** How transactions are dealt to lanes: in turn, or at random from a seed (a run can be repeated exactly). */
export type LaneAssignment = { readonly kind: 'round-robin' } | { readonly kind: 'random'; readonly seed: number };

export interface PhaseResult {
  readonly records: TxRecord[];
  readonly startedAt: number;
  readonly lastSendAt: number;
  readonly endedAt: number;
  /** The localnet's TPU counters around each measured window (one per phase; several once repeats are merged). */
  readonly counters?: readonly { readonly before: LocalnetCounters; readonly after: LocalnetCounters }[];
  /** Leaders of slots [leadersFrom, leadersFrom + leaders.length). */
  readonly leadersFrom: number;
  readonly leaders: readonly string[];
  readonly pollMs: number;
  /** The bench's own event-loop delay while sending (ms): a busy bench sends late and sees slots late. */
  readonly loopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

export interface PhaseOptions {
  /** The route sets of this phase (one: a set on its own; several: interleaved in the same slots). */
  readonly lanes: readonly PhaseLane[];
  /** Absent: round robin. */
  readonly assign?: LaneAssignment;
  /** Per lane: the phase sends ratePerSecond x lanes.length. */
  readonly ratePerSecond: number;
  readonly durationMs: number;
  readonly tailMs: number;
  readonly maxRetries?: number;
  readonly pollMs: number;
  readonly progress?: (line: string) => void;
}

/** mulberry32: a small seeded generator, enough to deal transactions to lanes reproducibly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** lane(i) for transaction i of a phase (call it for i = 0, 1, 2, ... in order: the random dealer keeps state). */
export function dealer(k: number, assign: LaneAssignment | undefined): (i: number) => number {
  if (k === 1) return () => 0;
  if (assign === undefined || assign.kind === 'round-robin') return (i) => i % k;
  const next = seeded(assign.seed);
  return () => Math.min(k - 1, Math.floor(next() * k));
}

async function submit(lane: PhaseLane, o: PhaseOptions, rec: TxRecord, base64: string): Promise<void> {
  const body: Record<string, unknown> = { transaction: base64, routes: lane.routes };
  if (o.maxRetries !== undefined) body.maxRetries = o.maxRetries;
  try {
    const res = await httpJson('POST', `${lane.relayUrl}/v1/submit`, lane.apiKey, body);
    rec.submitStatus = res.status;
    rec.submitMs = Date.now() - rec.sentAt;
    const m = JSON.parse(res.body) as { accepted?: boolean; error?: { reason?: string } };
    rec.accepted = m.accepted === true;
    if (!rec.accepted) rec.refusal = m.error?.reason ?? `http_${res.status}`;
  } catch (err) {
    rec.submitStatus = 0;
    rec.refusal = `no_answer:${(err as { code?: string }).code ?? 'error'}`;
  }
}

/** Polls getSignatureStatuses for the accepted, not yet confirmed records. */
async function pollStatuses(rpcUrl: string, records: readonly TxRecord[]): Promise<number> {
  const pending = records.filter((r) => r.accepted && !r.confirmed);
  for (let i = 0; i < pending.length; i += STATUS_BATCH) {
    const chunk = pending.slice(i, i + STATUS_BATCH);
    const st = await rpcCall<{ value: ({ slot: number; err: unknown; confirmationStatus?: string } | null)[] }>(rpcUrl, 'getSignatureStatuses', [
      chunk.map((r) => r.signature),
      { searchTransactionHistory: false },
    ]);
    const now = Date.now();
    st.value.forEach((v, j) => {
      if (v === null) return;
      const r = chunk[j];
      r.statusSeenAt ??= now;
      r.landedSlot = v.slot;
      r.err = v.err;
      if (v.confirmationStatus === 'confirmed' || v.confirmationStatus === 'finalized') r.confirmed = true;
    });
  }
  return records.filter((r) => r.accepted && !r.confirmed).length;
}

export async function runPhase(t: PhaseTarget, factory: TransferFactory, slots: SlotTracker, o: PhaseOptions): Promise<PhaseResult> {
  const before = t.localnet ? await rpcCall<LocalnetCounters>(t.rpcUrl, 'localnet_getCounters') : undefined;
  const records: TxRecord[] = [];
  const inflight: Promise<void>[] = [];
  const k = o.lanes.length;
  const rate = o.ratePerSecond * k;
  const total = Math.max(k, Math.round((rate * o.durationMs) / 1000));
  const laneOf = dealer(k, o.assign);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const startedAt = Date.now();
  const t0 = performance.now();
  let polling = false;
  const poller = setInterval(() => {
    if (polling) return;
    polling = true;
    pollStatuses(t.rpcUrl, records).then(
      () => (polling = false),
      () => (polling = false), // a failed poll is retried by the next tick
    );
  }, o.pollMs);
  // Paced on an absolute schedule (transaction i is due at i / rate), so a late tick catches up instead of drifting.
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      const limit = Math.min(due, records.length + MAX_SENDS_PER_TURN);
      while (records.length < limit) {
        const tx = factory.next();
        const lane = laneOf(records.length);
        const rec: TxRecord = {
          seq: records.length,
          lane,
          signature: tx.signature,
          sentAt: Date.now(),
          sentHrNs: process.hrtime.bigint(),
          sendSlot: slots.current,
          submitStatus: 0,
          accepted: false,
          confirmed: false,
        };
        records.push(rec);
        inflight.push(submit(o.lanes[lane], o, rec, tx.base64));
      }
      if (records.length >= total) resolve();
      else if (records.length < due) setImmediate(tick);
      else setTimeout(tick, SEND_TICK_MS);
    };
    tick();
  });
  const lastSendAt = Date.now();
  loop.disable();
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  const loopDelayMs = { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) };
  await Promise.all(inflight);
  o.progress?.(`  sent ${records.length}, accepted ${records.filter((r) => r.accepted).length}; waiting up to ${o.tailMs} ms for landings`);
  const deadline = lastSendAt + o.tailMs;
  while (Date.now() < deadline) {
    if (!polling && (await pollStatuses(t.rpcUrl, records).catch(() => 1)) === 0) break;
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
  clearInterval(poller);
  while (polling) await new Promise((r) => setTimeout(r, 10));
  await pollStatuses(t.rpcUrl, records).catch(() => 0); // a last look at the deadline
  const endedAt = Date.now();
  // Anything seen after the tail does not count: only what was confirmed by the deadline is landed.
  const after = t.localnet ? await rpcCall<LocalnetCounters>(t.rpcUrl, 'localnet_getCounters') : undefined;
  if (t.localnet && before) await readLandings(t.rpcUrl, before.totalLandings, records);
  await readReceipts(o.lanes, records);
  // Loops, not Math.min(...array): an hour at 100 tx/s is more arguments than a call may take.
  let leadersFrom = Number.MAX_SAFE_INTEGER;
  let lastSlot = slots.current;
  for (const r of records) {
    leadersFrom = Math.min(leadersFrom, r.sendSlot);
    lastSlot = Math.max(lastSlot, r.landedSlot ?? 0);
  }
  const count = Math.min(5_000, Math.max(1, lastSlot - leadersFrom + 1));
  const leaders = await rpcCall<string[]>(t.rpcUrl, 'getSlotLeaders', [leadersFrom, count]).catch(() => [] as string[]);
  return { records, startedAt, lastSendAt, endedAt, counters: before && after ? [{ before, after }] : undefined, leadersFrom, leaders, pollMs: o.pollMs, loopDelayMs };
}

interface LandingPage {
  next: number;
  total: number;
  landings: { signature: string; slot: number; validator: string; sender: string | null; executedNs: string }[];
}

async function readLandings(rpcUrl: string, from: number, records: TxRecord[]): Promise<void> {
  const bySig = new Map(records.map((r) => [r.signature, r]));
  let next = from;
  for (;;) {
    const page = await rpcCall<LandingPage>(rpcUrl, 'localnet_getLandings', [{ from: next, limit: 10_000 }]);
    for (const l of page.landings) {
      const r = bySig.get(l.signature);
      if (r === undefined || r.executedNs !== undefined) continue;
      r.executedNs = BigInt(l.executedNs);
      r.landedValidator = l.validator;
      r.landedSender = l.sender;
    }
    if (page.landings.length === 0 || page.next >= page.total) return;
    next = page.next;
  }
}

interface ReceiptJson {
  status: string;
  rebroadcasts: number;
  routes: Record<string, { outcome: string; targets: number }>;
  landed?: { slot: number; slotsToLand: number | null; firstRoute: string | null; processedAt?: number; finalizedAt?: number | null; finalizedSlot?: number | null } | null;
  reason?: { code: string; sent: boolean; closeCode: number | null; detail: string | null } | null;
  adaptive?: { decisions: string[]; addedRoutes: string[] } | null;
}

async function readReceipts(lanes: readonly PhaseLane[], records: TxRecord[]): Promise<void> {
  const todo = records.filter((r) => r.accepted);
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < todo.length) {
      const r = todo[i++];
      const t = lanes[r.lane];
      for (let attempt = 0; attempt < 5; attempt++) {
        const res = await httpJson('GET', `${t.relayUrl}/v1/transactions/${r.signature}`, t.apiKey).catch(() => undefined);
        if (res === undefined || res.status === 429 || res.status === 503) {
          await new Promise((ok) => setTimeout(ok, 200));
          continue;
        }
        if (res.status === 200) {
          const j = JSON.parse(res.body) as ReceiptJson;
          r.receipt = {
            status: j.status,
            rebroadcasts: j.rebroadcasts,
            routes: Object.fromEntries(Object.entries(j.routes).map(([k, v]) => [k, { outcome: v.outcome, targets: v.targets }])),
            firstRoute: j.landed?.firstRoute ?? null,
            slotsToLand: j.landed?.slotsToLand ?? null,
            reason: j.reason ?? null,
            adaptive: j.adaptive ? { decisions: j.adaptive.decisions, addedRoutes: j.adaptive.addedRoutes } : null,
            landedSlot: j.landed?.slot ?? null,
            processedAt: j.landed?.processedAt ?? null,
            finalizedAt: j.landed?.finalizedAt ?? null,
            finalizedSlot: j.landed?.finalizedSlot ?? null,
          };
        }
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: RECEIPT_CONCURRENCY }, worker));
}

/**
 * Repeats of one phase merged (--repeat): records end to end (seq renumbered), every window's counters kept (their
 * deltas add up), the first repeat's leaders and times (the timeline draws the first repeat only), the worst loop
 * delay. Counts add up: a set's sent, landed and not landed are the sums over the repeats.
 */
export function mergePhases(phases: readonly PhaseResult[]): PhaseResult {
  if (phases.length === 1) return phases[0];
  const records: TxRecord[] = [];
  for (const p of phases) for (const r of p.records) records.push({ ...r, seq: records.length });
  const counters = phases.every((p) => p.counters !== undefined) ? phases.flatMap((p) => p.counters!) : undefined;
  const first = phases[0];
  const loopDelayMs = {
    p50: Math.max(...phases.map((p) => p.loopDelayMs.p50)),
    p99: Math.max(...phases.map((p) => p.loopDelayMs.p99)),
    max: Math.max(...phases.map((p) => p.loopDelayMs.max)),
  };
  return { ...first, records, counters, endedAt: phases[phases.length - 1].endedAt, loopDelayMs };
}
