// The retry queue's storage (egress worker; warm: one admit per transaction that asks for rebroadcasts, one scan per
// scheduler tick). Bounded at retries.maxQueue entries per worker. A ring slot is released as soon as the first send
// finished, so an admitted transaction is COPIED here: one fixed-size slot per entry in SharedArrayBuffer chunks
// (the routes read TxView.sab/byteOffset exactly as they read the ring, so no route needs a second code path), grown
// lazily CHUNK_ENTRIES at a time and reused through a free list (no per-transaction allocation after warm-up).
// An entry is removed only when it has finished AND no route is still holding its bytes (inFlight === 0).
import { encodePubkeyBase58, encodeSignatureBase58 } from '../../tx/base58.js';
import { signatureAndBlockhashOffsets } from '../../tx/wire-offsets.js';
import type { TxView } from '../contract/route.js';

/** Entries per storage chunk: 256 x 1232 B = 308 KiB at a time. */
const CHUNK_ENTRIES = 256;

export interface RetryEntry {
  /** Storage slot (stable while the entry lives). */
  readonly index: number;
  /** The transaction as routes see it: a view over this queue's own copy. */
  view: TxView;
  /** Base58 first signature (getSignatureStatuses key). */
  signature: string;
  /** Base58 recent blockhash ('' when the message could not be read: expiry falls back to the TTL). */
  blockhash: string;
  /** Routes to rebroadcast to (the record's route mask ∩ retries.routes). */
  routeMask: number;
  /** Rebroadcasts still allowed; -1 = until landed or expired. */
  retriesLeft: number;
  /** When the next rebroadcast is due (ms, performance.now() clock). */
  nextSendAt: number;
  /** When the scheduler next looks at it (its place in the scheduler's DueHeap): nextSendAt, or later while a round is in flight. */
  dueAt: number;
  /** Fallback expiry (ms, performance.now() clock): admitted + retries.blockhashTtlMs. */
  expiresAt: number;
  admittedAt: number;
  /** Rebroadcast sends not yet answered by their routes. */
  inFlight: number;
  /** Some route reported `sent` (first send or a rebroadcast). */
  delivered: boolean;
  /** Rebroadcast rounds done. */
  rounds: number;
  /** Set once the entry reached its end (counted); it is freed when inFlight drops to 0. */
  finished: boolean;
}

export class RetryQueue {
  readonly capacity: number;
  private readonly slotBytes: number;
  private readonly chunks: SharedArrayBuffer[] = [];
  private readonly chunkBytes: Buffer[] = [];
  private readonly free: number[] = [];
  private allocated = 0;
  /** Live entries (finished ones stay until their in-flight sends answered). */
  readonly entries = new Set<RetryEntry>();
  /** Entries not finished yet. */
  private live = 0;

  constructor(capacity: number, maxTransactionBytes: number) {
    this.capacity = capacity;
    this.slotBytes = Math.ceil(maxTransactionBytes / 8) * 8;
  }

  /** Entries admitted and not finished. */
  get size(): number {
    return this.live;
  }

  get full(): boolean {
    // Finished entries still waiting for in-flight sends keep their storage, so they count against the bound.
    return this.entries.size >= this.capacity;
  }

  /**
   * Copy `src` (a ring slot's view) into the queue. Returns null when full (the caller sheds and counts it).
   * `fields` fills the routing/expiry fields; signature and blockhash are read from the copy.
   */
  admit(
    src: TxView,
    fields: Pick<RetryEntry, 'routeMask' | 'retriesLeft' | 'nextSendAt' | 'expiresAt' | 'admittedAt' | 'delivered'>,
  ): RetryEntry | null {
    if (this.full || src.length > this.slotBytes) return null;
    const index = this.take();
    const chunk = (index / CHUNK_ENTRIES) | 0;
    const sab = this.chunks[chunk];
    const byteOffset = (index % CHUNK_ENTRIES) * this.slotBytes;
    const buf = this.chunkBytes[chunk];
    buf.set(new Uint8Array(src.sab, src.byteOffset, src.length), byteOffset);
    const bytes = buf.subarray(byteOffset, byteOffset + src.length);
    const [sigOff, hashOff] = signatureAndBlockhashOffsets(bytes, 0, src.length);
    const entry: RetryEntry = {
      index,
      view: {
        bytes,
        sab,
        byteOffset,
        length: src.length,
        signatureOffset: src.signatureOffset,
        keyId: src.keyId,
        maxRetries: src.maxRetries,
        traceId: src.traceId,
        receivedAtMs: src.receivedAtMs,
        receiptSeq: src.receiptSeq ?? 0,
        rebroadcast: true,
      },
      signature: sigOff >= 0 ? encodeSignatureBase58(bytes, sigOff) : '',
      blockhash: hashOff >= 0 ? encodePubkeyBase58(bytes, hashOff) : '',
      inFlight: 0,
      rounds: 0,
      finished: false,
      dueAt: fields.nextSendAt,
      ...fields,
    };
    this.entries.add(entry);
    this.live++;
    return entry;
  }

  /** Mark finished (counted by the caller); storage is reused once no send holds it. */
  finish(entry: RetryEntry): void {
    if (entry.finished) return;
    entry.finished = true;
    this.live--;
    this.release(entry);
  }

  /** Called when an in-flight send answered: frees a finished entry's storage once nothing holds it. */
  release(entry: RetryEntry): void {
    if (entry.finished && entry.inFlight === 0 && this.entries.delete(entry)) this.free.push(entry.index);
  }

  private take(): number {
    const f = this.free.pop();
    if (f !== undefined) return f;
    const index = this.allocated++;
    if (index % CHUNK_ENTRIES === 0) {
      const entries = Math.min(CHUNK_ENTRIES, this.capacity - index);
      const sab = new SharedArrayBuffer(Math.max(entries, 1) * this.slotBytes);
      this.chunks.push(sab);
      this.chunkBytes.push(Buffer.from(sab));
    }
    return index;
  }
}
