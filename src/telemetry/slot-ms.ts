// The slot duration a reader of the leader-slot snapshot should use (any thread that holds a SnapshotReader: front
// thread, egress workers, QUIC threads; HOT-safe: no allocation). docs/slot-time.md.
// A stale snapshot still carries the last measurement: the slot number ages, the slot time does not (it changes at
// epoch boundaries only), so the age rule that makes getLeaderSlots fail closed does not apply here.
import { FALLBACK_SLOT_MS } from './slot-duration.js';
import { HDR_BYTES, HDR_SLOT_MS, HDR_SLOT_MS_SAMPLES, SNAP_CTL_PUBLISHED, SNAP_CTL_SEQ, attachSnapshotBuffer, bufferBase } from '../shm/snapshot-layout.js';
import type { SnapshotView } from './snapshot.js';

/** The measured slot duration in `view`, ms; FALLBACK_SLOT_MS when there is no view or nothing was measured yet. */
export function slotMsOf(view: SnapshotView | null): number {
  return view !== null && view.slotMsSamples > 0 && view.slotMs > 0 ? view.slotMs : FALLBACK_SLOT_MS;
}

/** True when `view` carries a measured slot duration (not the fallback). */
export function slotMsMeasured(view: SnapshotView | null): boolean {
  return view !== null && view.slotMsSamples > 0 && view.slotMs > 0;
}

/**
 * The measured slot duration straight from the snapshot's header (threads that need the slot time but not the rows:
 * the QUIC threads' stale bound, the retry scheduler). Reads two header words under the buffer's seqlock, once per
 * generation; never decodes the leader table or the rows. HOT-safe: one Atomics.load while the generation is unchanged.
 */
export class SnapshotSlotMs {
  private readonly ctl: Int32Array;
  private readonly headers: readonly DataView[];
  private generation = 0;
  private value = FALLBACK_SLOT_MS;

  constructor(sab: SharedArrayBuffer) {
    const a = attachSnapshotBuffer(sab);
    this.ctl = a.ctl;
    this.headers = [0, 1].map((b) => new DataView(sab, bufferBase(b, a.capacity), HDR_BYTES));
  }

  /** ms per slot: measured, or FALLBACK_SLOT_MS while nothing was measured or published. */
  current(): number {
    const gen = Atomics.load(this.ctl, SNAP_CTL_PUBLISHED) >>> 0;
    if (gen === 0 || gen === this.generation) return this.value;
    const b = (gen - 1) & 1;
    const seq = Atomics.load(this.ctl, SNAP_CTL_SEQ[b]);
    if ((seq & 1) === 1) return this.value; // being rewritten (we were lapped): the previous value is still right
    const ms = this.headers[b].getFloat64(HDR_SLOT_MS, true);
    const samples = this.headers[b].getUint32(HDR_SLOT_MS_SAMPLES, true);
    if (Atomics.load(this.ctl, SNAP_CTL_SEQ[b]) !== seq) return this.value;
    this.generation = gen;
    this.value = samples > 0 && ms > 0 ? ms : FALLBACK_SLOT_MS;
    return this.value;
  }
}

/** A slot-time source: the snapshot's when the relay has one, else the fallback (telemetry off). */
export function slotMsSource(snapshot: SharedArrayBuffer | undefined): () => number {
  if (snapshot === undefined) return () => FALLBACK_SLOT_MS;
  const r = new SnapshotSlotMs(snapshot);
  return () => r.current();
}
