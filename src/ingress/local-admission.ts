// Local admission (QUIC thread, HOT: one call per finished stream of an eligible key). A stream of a key the front
// marked POLICY_LOCAL (src/ingress/local-policy.ts: effective routes within the quic-egress thread's, direct/static) is
// admitted here and sent in this thread, without the round trip QUIC thread -> front -> QUIC ring -> QUIC thread:
// Accepting a transaction means what it means on the front: the steps are the admission core's (src/admission/).
//   - the key: settled at the handshake (the connection's key id), its policy word read from shared memory (the
//     routes: send-options' default routes for the key, written by src/ingress/local-policy.ts);
//   - the budget: one token from the key's submit bucket in the budget buffer (admission/submit-budget.ts), the very
//     bucket HTTP draws from;
//   - size + sanitize + signatures when the key asks: admission/transaction-checks.ts, as the intake, on the bytes
//     copied once into a slot of this thread's slab (a raw stream needs no decode);
//   - the receipt: its number reserved and its entry claimed (admission/receipt-claim.ts) before any route can write
//     to it; signature, request id and blockhash go to the front after the send, in a `localAccepted` message on the
//     ingress request ring (src/ingress/front-ingress.ts files them);
//   - the send: the quic-egress thread's consumer loop's dispatchLocal (src/egress/consumer/consumer-loop.ts), the same routes,
//     outcome counters and receipt writes as a ring record.
// Anything that is not a plain success (a bidi request naming routes or maxRetries or other fields, a transaction that
// fails a check, a spent budget, a full slab or request ring) gives the token back and returns null: the stream then
// goes to the front as before, which answers it exactly as it always did (so refusals and their counts are unchanged).
import { Packr, Unpackr } from 'msgpackr';
import { BudgetTable, POLICY_LOCAL, POLICY_ROUTE_BITS, POLICY_VERIFY } from '../shm/budget-layout.js';
import { MSG_KINDS, pushIngressNote } from '../shm/ingress-layout.js';
import type { MessageRingProducer } from '../shm/message-ring.js';
import { receiptViews, type ReceiptViews } from '../shm/receipts-layout.js';
import { LocalSlab } from '../shm/local-slab-layout.js';
import { SojournBoard } from '../shm/sojourn-layout.js';
import type { Logger } from '../log/logger.js';
import { claimReceiptSeq } from '../admission/receipt-claim.js';
import { routeNames } from '../admission/send-options.js';
import { refundSharedSubmitToken, takeSharedSubmitToken } from '../admission/submit-budget.js';
import { checkTransaction, fitsTransaction } from '../admission/transaction-checks.js';
import { createParsedTransaction, encodeSignatureBase58 } from '../tx/index.js';

/**
 * The quic-egress thread's consumer loop, as local admission sees it: send the transaction at `sab[byteOffset, +length)` on the
 * routes of `routeMask` like a ring record; `done` once every route answered (the bytes may be reused then).
 */
export type LocalDispatch = (
  sab: SharedArrayBuffer,
  byteOffset: number,
  length: number,
  keyId: number,
  routeMask: number,
  receivedAtMs: number,
  traceId: string,
  receiptSeq: number,
  done: () => void,
) => void;

export interface LocalAdmissionOptions {
  readonly budgets: SharedArrayBuffer;
  /** The slab (src/shm/local-slab-layout.ts), made by the front so that it outlives this thread. */
  readonly slab: SharedArrayBuffer;
  /** The receipts buffer (absent: receipts off). */
  readonly receipts?: SharedArrayBuffer;
  readonly maxTransactionBytes: number;
  /** The quic-egress thread -> front ring: the localAccepted notes. */
  readonly notes: MessageRingProducer;
  /** The consumer loop's dispatch now (null while it does not run: everything goes to the front). */
  readonly dispatch: () => LocalDispatch | null;
  /** Admission by delay's board (src/shm/sojourn-layout.ts) and the QUIC ring consumer's row; absent = not read. */
  readonly sojourn?: SharedArrayBuffer;
  readonly sojournWriter?: number;
}

/** Payload of a localAccepted note: first signature (64 bytes), recent blockhash (32), dispatch time (f64 ms). */
export const LOCAL_NOTE_BYTES = 64 + 32 + 8;
export const LOCAL_NOTE_BLOCKHASH_AT = 64;
export const LOCAL_NOTE_DISPATCHED_AT = 96;
/** What admit() returns for an accepted uni stream (nothing is answered on a uni stream). */
export const UNI_ACCEPTED: Uint8Array = new Uint8Array(0);

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** How often a replay looks for the consumer loop's dispatch (it starts with the thread, or restarts after it). */
const REPLAY_POLL_MS = 10;
/** A replay waits at most this long for the dispatch; then the slots stay for the next thread (logged). */
const REPLAY_WAIT_MS = 30_000;

export class LocalAdmission {
  private readonly budgets: BudgetTable;
  private readonly receipts: ReceiptViews | null;
  private readonly slab: LocalSlab;
  private readonly bytes: Buffer;
  /** Free slab slots (a stack). */
  private readonly free: Int32Array;
  private freeCount = 0;
  private readonly parsed = createParsedTransaction();
  private readonly note: Buffer = Buffer.alloc(LOCAL_NOTE_BYTES);
  private readonly packr = new Packr({ useRecords: false });
  private readonly unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
  /** Streams admitted here (tests, metrics). */
  admitted = 0;
  /** The dispatch each in-flight slot went to: one that is not the current one ended with its loop (replayed). */
  private readonly sentBy: (LocalDispatch | null)[];
  private lastDispatch: LocalDispatch | null = null;
  /** Admission by delay: the board's words and the QUIC consumer's OVER word (-1 = not read). */
  private sojournWords: Int32Array = new Int32Array(1);
  private sojournOver = -1;
  /** The slot admit() accepted, until sendAdmitted() sends it (-1: none). */
  private pendingSlot = -1;

  constructor(private readonly o: LocalAdmissionOptions) {
    this.budgets = new BudgetTable(o.budgets);
    this.receipts = o.receipts !== undefined ? receiptViews(o.receipts) : null;
    this.slab = new LocalSlab(o.slab);
    if (this.slab.slotBytes < o.maxTransactionBytes) throw new Error('local slab: slots smaller than maxTransactionBytes');
    this.bytes = this.slab.bytes;
    if (o.sojourn !== undefined && o.sojournWriter !== undefined) {
      const board = new SojournBoard(o.sojourn);
      this.sojournWords = board.words;
      this.sojournOver = board.overIndex(o.sojournWriter);
    }
    this.free = new Int32Array(this.slab.slots);
    this.sentBy = new Array<LocalDispatch | null>(this.slab.slots).fill(null);
    // Slots still in flight were answered `accepted` by a thread that ended: they are sent again (replay()), not reused.
    for (let i = this.slab.slots - 1; i >= 0; i--) if (!this.slab.inFlight(i)) this.free[this.freeCount++] = i;
  }

  /**
   * Sends again every transaction a previous QUIC thread admitted and did not see answered by every route (cold: once
   * per thread start, when the consumer loop's dispatch is there). Resolves with how many.
   */
  async replay(log: Logger): Promise<number> {
    const slab = this.slab;
    const waiting: number[] = [];
    for (let i = 0; i < slab.slots; i++) if (slab.inFlight(i)) waiting.push(i);
    if (waiting.length === 0) return 0;
    let dispatch = this.o.dispatch();
    for (const t0 = performance.now(); dispatch === null && performance.now() - t0 < REPLAY_WAIT_MS; dispatch = this.o.dispatch()) {
      await new Promise((r) => setTimeout(r, REPLAY_POLL_MS));
    }
    if (dispatch === null) {
      log.error({ event: 'quic_local_replay_stalled', slots: waiting.length }, 'QUIC local admission: no consumer loop to replay to; left for the next thread');
      return 0;
    }
    this.lastDispatch = dispatch;
    for (const slot of waiting) this.resend(dispatch, slot);
    log.warn({ event: 'quic_local_replay', transactions: waiting.length }, 'QUIC local admission: sent again what the previous QUIC thread had accepted');
    return waiting.length;
  }

  /**
   * The consumer loop of this thread was replaced (it crashed and the pool started another): what the old one had not
   * finished stays in flight (consumer-loop.ts leaves it), and is sent again through the new one. Cold.
   */
  private loopChanged(dispatch: LocalDispatch): void {
    this.lastDispatch = dispatch;
    for (let slot = 0; slot < this.slab.slots; slot++) {
      const by = this.sentBy[slot];
      if (by !== null && by !== dispatch && this.slab.inFlight(slot)) this.resend(dispatch, slot);
    }
  }

  private resend(dispatch: LocalDispatch, slot: number): void {
    const r = this.slab.record(slot);
    this.sentBy[slot] = dispatch;
    dispatch(this.slab.sab, this.slab.txOffset(slot), r.length, r.keyId, r.routeMask, r.receivedAtMs, `quic-${r.connId}-${r.streamId}`, r.seq, () => this.release(slot));
  }

  private release(slot: number): void {
    this.sentBy[slot] = null;
    this.slab.release(slot);
    this.free[this.freeCount++] = slot;
  }

  /**
   * A finished stream of key `keyId`: the answer when admitted here (UNI_ACCEPTED for a uni stream, the MessagePack
   * map for a bidi one), or null = the front decides (the caller forwards the stream as before).
   */
  admit(bidi: boolean, keyId: number, connId: number, streamId: number, bytes: Uint8Array, finAtMs: number): Uint8Array | null {
    const b = this.budgets;
    const policy = b.policyOf(keyId);
    if ((policy & POLICY_LOCAL) === 0 || !b.open || this.freeCount === 0) return null;
    // A route over its target sojourn: the front decides (its intake refuses, or keeps the routes that can take it),
    // so admission by delay has one implementation. One Atomics.load; nothing taken yet.
    if (this.sojournOver >= 0 && (Atomics.load(this.sojournWords, this.sojournOver) & policy & POLICY_ROUTE_BITS) !== 0) return null;
    const dispatch = this.o.dispatch();
    if (dispatch === null || this.o.notes.free() === 0) return null;
    if (dispatch !== this.lastDispatch) this.loopChanged(dispatch);
    const tx = bidi ? this.request(bytes) : bytes;
    if (tx === null || tx.length === 0 || !fitsTransaction(tx.length, this.o.maxTransactionBytes)) return null;
    const bucket = takeSharedSubmitToken(b, keyId, nowMs());
    if (bucket < 0) return null;
    const slot = this.free[--this.freeCount];
    const off = this.slab.txOffset(slot);
    const buf = this.bytes;
    buf.set(tx, off); // the one copy: stream bytes -> slab slot, checked and sent from there
    const p = this.parsed;
    // A refusal's reason is not needed here (the front answers it again): only whether there is one.
    if (checkTransaction(buf, off, tx.length, p, this.o.maxTransactionBytes, (policy & POLICY_VERIFY) !== 0) !== null) {
      this.free[this.freeCount++] = slot;
      refundSharedSubmitToken(b, bucket);
      return null;
    }
    const mask = policy & POLICY_ROUTE_BITS;
    const r = this.receipts;
    const seq = r === null ? 0 : claimReceiptSeq(r);
    const sigAt = off + p.firstSignatureOffset;
    const hashAt = off + p.recentBlockhashOffset;
    // The note is built now: the slot may be reused as soon as the routes answered.
    const note = this.note;
    buf.copy(note, 0, sigAt, sigAt + 64);
    buf.copy(note, LOCAL_NOTE_BLOCKHASH_AT, hashAt, hashAt + 32);
    // In the slab before the answer and the send: a replacement thread sends it again if this one ends first.
    this.slab.claim(slot, tx.length, keyId, mask, seq, finAtMs, connId, streamId);
    this.pendingSlot = slot;
    this.admitted++;
    if (!bidi) return UNI_ACCEPTED;
    return this.packr.pack({ accepted: true, signature: encodeSignatureBase58(note, 0), routes: routeNames(mask) });
  }

  /**
   * Sends what admit() just accepted (HOT; the caller calls it right after admit() returned an answer, once that answer
   * is on its way: the client's acknowledgement does not wait for the send to the leader, as over HTTP), then tells the
   * front (the receipt's front half, the key's counts) off the path.
   */
  sendAdmitted(): void {
    const slot = this.pendingSlot;
    if (slot < 0) return;
    this.pendingSlot = -1;
    const dispatch = this.lastDispatch!;
    const r = this.slab.record(slot);
    // The note first: should the thread die in the send, the replacement resends the transaction, and its receipt's
    // front half is in the ring already (a replay sends no note). The front is woken for it at the end of this turn,
    // after the send: the wake-up is a cross-thread post (src/shm/doorbell.ts) the leader's datagram need not wait for.
    const note = this.note;
    note.writeDoubleLE(nowMs(), LOCAL_NOTE_DISPATCHED_AT);
    pushIngressNote(this.o.notes, MSG_KINDS.localAccepted, note, r.keyId, r.connId, r.streamId, r.receivedAtMs, r.seq, r.routeMask);
    this.sentBy[slot] = dispatch;
    dispatch(this.slab.sab, this.slab.txOffset(slot), r.length, r.keyId, r.routeMask, r.receivedAtMs, `quic-${r.connId}-${r.streamId}`, r.seq, () => this.release(slot));
  }

  /**
   * The transaction of a bidi request {transaction: bin} with nothing else but `routes: "default"` / nil; anything
   * else (routes named, maxRetries, other fields, not MessagePack) -> null: the front answers it as before.
   */
  private request(bytes: Uint8Array): Uint8Array | null {
    let doc: unknown;
    try {
      doc = bytes.length === 0 ? undefined : this.unpackr.unpack(bytes);
    } catch {
      return null;
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || doc instanceof Uint8Array || doc instanceof Map) return null;
    const o = doc as Record<string, unknown>;
    let tx: Uint8Array | null = null;
    for (const k in o) {
      const v = o[k];
      if (k === 'transaction' && v instanceof Uint8Array) tx = v;
      else if (k !== 'routes' || (v !== null && v !== undefined && v !== 'default')) return null;
    }
    return tx;
  }
}
