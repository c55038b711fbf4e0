// Per-key submission budgets and the quic-egress thread's per-key admission policy, in one SharedArrayBuffer (HOT: take() and
// refund() run per submission on the front thread and, for locally admitted QUIC streams, on the quic-egress thread; the
// policy words are written by the front every POLICY_REFRESH_MS, cold). One token bucket per slot, the same arithmetic
// as src/admission/rate-limit.ts's private buckets: the slot's four numbers are changed under a one-word lock taken
// with Atomics.compareExchange (0 -> 1) and released with Atomics.store, so HTTP (front) and QUIC (QUIC thread) draw
// from one budget. The critical section is a handful of float operations and never blocks, so the lock spins.
//
//   bytes 0..63   header (Int32 words): [0] MAGIC, [1] LAYOUT_VERSION, [2] bucket slots, [3] key ids,
//                 [4] OPEN (1 = the quic-egress thread may admit locally), [5] next free bucket slot (front only)
//   Int32[slots]      lock per bucket slot
//   Int32[keys]       policy per key id: 0 = the front decides (today's path), else POLICY_LOCAL | record route mask
//                     (| POLICY_VERIFY when the key verifies signatures)
//   Int32[keys]       the bucket slot of the key id's current entry (-1 = a private bucket: the front decides)
//   Float64[slots*4]  tokens, updatedMs, perSecond, burst per bucket slot

export const BUDGET_MAGIC = 0x42554447; // 'BUDG'
export const BUDGET_LAYOUT_VERSION = 1;
const HEADER_BYTES = 64;
const H_MAGIC = 0;
const H_VERSION = 1;
const H_SLOTS = 2;
const H_KEYS = 3;
const H_OPEN = 4;
const H_NEXT_SLOT = 5;
/** The key may be admitted in the quic-egress thread (its effective routes are QUIC routes only, nothing else decides). */
export const POLICY_LOCAL = 1 << 30;
/** The key's plan asks for signature verification. */
export const POLICY_VERIFY = 1 << 29;
/** The low bits of a policy word: the record's route mask (the routes asked for + those the relay adds). */
export const POLICY_ROUTE_BITS = 0xffff;
/** How often the front rewrites the policy words (a plan change, revocation or health change reaches the quic-egress thread within it). */
export const POLICY_REFRESH_MS = 50;

const F_TOKENS = 0;
const F_UPDATED = 1;
const F_PER_SECOND = 2;
const F_BURST = 3;
const F_WORDS = 4;

function offsets(slots: number, keys: number): { locks: number; policy: number; slotOf: number; floats: number; total: number } {
  const locks = HEADER_BYTES;
  const policy = locks + slots * 4;
  const slotOf = policy + keys * 4;
  const floats = Math.ceil((slotOf + keys * 4) / 8) * 8;
  return { locks, policy, slotOf, floats, total: floats + slots * F_WORDS * 8 };
}

/** A fresh budget buffer: `slots` buckets (every submit bucket a key table ever makes), `keys` key ids. Cold. */
export function createBudgetBuffer(slots: number, keys: number): SharedArrayBuffer {
  if (!Number.isInteger(slots) || slots < 1 || !Number.isInteger(keys) || keys < 1) throw new RangeError(`budget buffer: ${slots} slots, ${keys} keys`);
  const o = offsets(slots, keys);
  const sab = new SharedArrayBuffer(o.total);
  const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
  h[H_VERSION] = BUDGET_LAYOUT_VERSION;
  h[H_SLOTS] = slots;
  h[H_KEYS] = keys;
  new Int32Array(sab, o.slotOf, keys).fill(-1);
  Atomics.store(h, H_MAGIC, BUDGET_MAGIC); // last: valid once the magic is visible
  return sab;
}

/** Typed views over a budget buffer, shared by both threads; checks magic, version and size. */
export class BudgetTable {
  readonly slots: number;
  readonly keys: number;
  private readonly header: Int32Array;
  private readonly locks: Int32Array;
  private readonly policy: Int32Array;
  private readonly slotOf: Int32Array;
  private readonly f: Float64Array;

  constructor(readonly sab: SharedArrayBuffer) {
    const h = new Int32Array(sab, 0, HEADER_BYTES >> 2);
    if (Atomics.load(h, H_MAGIC) !== BUDGET_MAGIC || h[H_VERSION] !== BUDGET_LAYOUT_VERSION) throw new Error('budget buffer: wrong magic or layout version');
    this.slots = h[H_SLOTS];
    this.keys = h[H_KEYS];
    const o = offsets(this.slots, this.keys);
    if (sab.byteLength !== o.total) throw new Error('budget buffer: size does not match its header');
    this.header = h;
    this.locks = new Int32Array(sab, o.locks, this.slots);
    this.policy = new Int32Array(sab, o.policy, this.keys);
    this.slotOf = new Int32Array(sab, o.slotOf, this.keys);
    this.f = new Float64Array(sab, o.floats, this.slots * F_WORDS);
  }

  /** A new bucket slot, full (front thread, cold: a key entry being made); -1 when every slot is used. */
  allocate(perSecond: number, burst: number, nowMs: number): number {
    const s = this.header[H_NEXT_SLOT];
    if (s >= this.slots) return -1;
    this.header[H_NEXT_SLOT] = s + 1;
    const b = s * F_WORDS;
    this.f[b + F_TOKENS] = burst;
    this.f[b + F_UPDATED] = nowMs;
    this.f[b + F_PER_SECOND] = perSecond;
    this.f[b + F_BURST] = burst;
    Atomics.store(this.locks, s, 0); // publishes the stores above
    return s;
  }

  private lock(s: number): void {
    // Spins: the holder is inside a few float operations on another core (or was preempted there: rare, and short).
    while (Atomics.compareExchange(this.locks, s, 0, 1) !== 0);
  }

  private unlock(s: number): void {
    Atomics.store(this.locks, s, 0);
  }

  /** TokenBucket.take on slot `s`: 0 = granted, else the milliseconds until `n` tokens are there (nothing taken). */
  take(s: number, n: number, nowMs: number): number {
    const f = this.f;
    const b = s * F_WORDS;
    this.lock(s);
    const perSecond = f[b + F_PER_SECOND];
    const burst = f[b + F_BURST];
    let tokens = f[b + F_TOKENS];
    const elapsed = nowMs - f[b + F_UPDATED];
    if (elapsed > 0) {
      tokens = Math.min(burst, tokens + (elapsed * perSecond) / 1000);
      f[b + F_TOKENS] = tokens;
      f[b + F_UPDATED] = nowMs;
    }
    if (tokens >= n) {
      f[b + F_TOKENS] = tokens - n;
      this.unlock(s);
      return 0;
    }
    this.unlock(s);
    const missing = Math.min(n, burst) - tokens;
    return Math.max(1, Math.ceil((missing * 1000) / perSecond));
  }

  refund(s: number, n: number): void {
    const f = this.f;
    const b = s * F_WORDS;
    this.lock(s);
    f[b + F_TOKENS] = Math.min(f[b + F_BURST], f[b + F_TOKENS] + n);
    this.unlock(s);
  }

  /** Tokens slot `s` would have at `nowMs`, at most its burst (cold: a reload carrying a bucket over). */
  leftAt(s: number, nowMs: number): number {
    const f = this.f;
    const b = s * F_WORDS;
    this.lock(s);
    const left = Math.min(f[b + F_BURST], f[b + F_TOKENS] + (Math.max(0, nowMs - f[b + F_UPDATED]) * f[b + F_PER_SECOND]) / 1000);
    this.unlock(s);
    return left;
  }

  /** Slot `s` holds `tokens` as of `nowMs` (cold: a reload carrying a bucket over). */
  setTokens(s: number, tokens: number, nowMs: number): void {
    const f = this.f;
    const b = s * F_WORDS;
    this.lock(s);
    f[b + F_TOKENS] = Math.min(f[b + F_BURST], tokens);
    f[b + F_UPDATED] = nowMs;
    this.unlock(s);
  }

  /** Tokens left in slot `s` as of its last change (tests, status). */
  tokens(s: number): number {
    return this.f[s * F_WORDS + F_TOKENS];
  }

  // ---- the quic-egress thread's admission policy (written by the front, read by the quic-egress thread) ----

  /** Whether the quic-egress thread may admit at all (0 while the relay stops or local admission is off). */
  get open(): boolean {
    return Atomics.load(this.header, H_OPEN) === 1;
  }

  setOpen(open: boolean): void {
    Atomics.store(this.header, H_OPEN, open ? 1 : 0);
  }

  /** The policy word of key id `k` and the bucket slot it draws from; 0 / -1 for ids beyond the table. */
  policyOf(k: number): number {
    return k >= 0 && k < this.keys ? Atomics.load(this.policy, k) : 0;
  }

  bucketOf(k: number): number {
    return k >= 0 && k < this.keys ? Atomics.load(this.slotOf, k) : -1;
  }

  /** Front, cold: key id `k` now draws from bucket `slot` under `policy` (the slot first, so a reader never pairs a new policy with an old slot). */
  setPolicy(k: number, policy: number, slot: number): void {
    if (k < 0 || k >= this.keys) return;
    if (policy === 0) Atomics.store(this.policy, k, 0);
    Atomics.store(this.slotOf, k, slot);
    Atomics.store(this.policy, k, policy);
  }
}
