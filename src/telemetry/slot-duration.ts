// The cluster's slot duration as measured from slot advances (telemetry thread, and each egress worker's polling
// leader source when telemetry is off; cold: one observe() per slot notification or getSlot answer). docs/slot-time.md.
//
// Input: (slot, time seen) pairs from slotSubscribe notifications or getSlot polls. Each advance is one sample
// (dt ms, ds slots). The estimate is sum(dt) / sum(ds) over the last WINDOW samples whose per-slot time is within
// OUTLIER_FACTOR of their median: the sum telescopes, so notification jitter and getSlot quantisation (a 400 ms poll
// of 300 ms slots sees 1, then 2 slots) cancel out, while a stall (a late notification, a paused upstream) or a burst
// of queued notifications (1 ms apart) is left out. A change of slot time (400 -> 200 ms at an epoch boundary) is
// fully followed after WINDOW samples (~6 s of slot notifications at 200 ms); a step larger than OUTLIER_FACTOR after
// WINDOW / 2 + 1. Until MIN_SAMPLES samples exist the estimate is FALLBACK_SLOT_MS.

/**
 * Slot duration used before anything is measured, ms. Mainnet-beta's documented figure as of late 2026: slot times
 * were cut at epoch boundaries (350 and 300 ms by 2026-09-15, 250 ms from epoch 1037, which began around 2026-09-18),
 * 200 ms is planned but not active (docs/slot-time.md, "The fallback: 250 ms", and the sources it names). Not 400 ms: that has not been mainnet's slot time since the cuts began.
 */
export const FALLBACK_SLOT_MS = 250;

/** Samples kept (each one slot advance). */
export const SLOT_WINDOW_SAMPLES = 32;
/** Fewer samples than this: the fallback (one jittery notification interval is not a measurement). */
export const MIN_SLOT_SAMPLES = 4;
/** A sample whose per-slot time is more than this factor away from the median is an outlier. */
export const OUTLIER_FACTOR = 3;
/** An advance of more slots than this is not a sample (a new cluster or an upstream that jumped, not a rate). */
const MAX_SAMPLE_SLOTS = 64;
/** Plausible per-slot time, ms: outside it a sample is clock trouble, not a slot time. */
const MIN_PER_SLOT_MS = 0.5;
const MAX_PER_SLOT_MS = 20_000;

export class SlotDurationEstimator {
  private lastSlot = -1;
  private lastAtMs = 0;
  private readonly dt: Float64Array;
  private readonly ds: Float64Array;
  private readonly per: Float64Array;
  private count = 0;
  private next = 0;
  private estimate: number;
  private kept = 0;

  constructor(
    private readonly window = SLOT_WINDOW_SAMPLES,
    private readonly fallbackMs = FALLBACK_SLOT_MS,
    private readonly minSamples = MIN_SLOT_SAMPLES,
  ) {
    this.dt = new Float64Array(window);
    this.ds = new Float64Array(window);
    this.per = new Float64Array(window);
    this.estimate = fallbackMs;
  }

  /** The estimated slot duration, ms (FALLBACK_SLOT_MS until MIN_SLOT_SAMPLES samples). */
  get slotMs(): number {
    return this.estimate;
  }

  /** Samples behind slotMs (0: the fallback, nothing measured). */
  get samples(): number {
    return this.kept;
  }

  /** A slot seen at `atMs` (ms, any monotonic-enough clock). Older or equal slots are ignored. */
  observe(slot: number, atMs: number): void {
    if (this.lastSlot >= 0 && slot <= this.lastSlot) return;
    const ds = slot - this.lastSlot;
    const dt = atMs - this.lastAtMs;
    const first = this.lastSlot < 0;
    this.lastSlot = slot;
    this.lastAtMs = atMs;
    if (first || ds > MAX_SAMPLE_SLOTS) return;
    const per = dt / ds;
    if (!(per >= MIN_PER_SLOT_MS && per <= MAX_PER_SLOT_MS)) return;
    this.dt[this.next] = dt;
    this.ds[this.next] = ds;
    this.next = (this.next + 1) % this.window;
    if (this.count < this.window) this.count++;
    this.recompute();
  }

  /** Forget everything (the upstream is a new cluster, whose slot time may differ). */
  reset(): void {
    this.lastSlot = -1;
    this.count = 0;
    this.next = 0;
    this.kept = 0;
    this.estimate = this.fallbackMs;
  }

  private recompute(): void {
    const n = this.count;
    if (n < this.minSamples) return;
    for (let i = 0; i < n; i++) this.per[i] = this.dt[i] / this.ds[i];
    const sorted = this.per.subarray(0, n).slice().sort();
    const median = n % 2 === 1 ? sorted[n >> 1] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    let sumDt = 0;
    let sumDs = 0;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const p = this.per[i];
      if (p * OUTLIER_FACTOR < median || p > median * OUTLIER_FACTOR) continue;
      sumDt += this.dt[i];
      sumDs += this.ds[i];
      kept++;
    }
    if (kept < this.minSamples || sumDs === 0) return; // the window is mostly outliers: keep the last estimate
    this.estimate = sumDt / sumDs;
    this.kept = kept;
  }
}
