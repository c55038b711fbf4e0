// Landing records and per-validator TPU counters (localnet process; add() is HOT, once per landed transaction).
// For every transaction that reached a leader through the TPU path and was committed: its slot, position in the
// slot, the validator that received it, the sender's identity (from its QUIC client certificate), the arrival time
// on CLOCK_MONOTONIC (process.hrtime.bigint() ns, comparable across processes on the same host) and the execution
// time. Exposed over the facade as `localnet_getLandings` (docs in facade/methods-localnet.ts).
export interface LandingRecord {
  readonly signature: string;
  readonly slot: number;
  readonly position: number;
  readonly validator: string;
  readonly sender: string | null;
  readonly arrivalNs: bigint;
  readonly executedNs: bigint;
  readonly err: unknown;
}

/** Why a transaction that reached a validator did not land. A closed set: these are the counter labels. */
export const DropReasons = ['not_leader', 'undecodable', 'invalid', 'rejected', 'block_full', 'skipped'] as const;
export type DropReason = (typeof DropReasons)[number];

export interface ValidatorCounters {
  received: number;
  landed: number;
  buffered: number;
  dropped: Record<DropReason, number>;
  /** Rejections by transaction error (BlockhashNotFound, AlreadyProcessed, SignatureFailure, ...). */
  rejectedBy: Record<string, number>;
}

function emptyCounters(): ValidatorCounters {
  return { received: 0, landed: 0, buffered: 0, dropped: { not_leader: 0, undecodable: 0, invalid: 0, rejected: 0, block_full: 0, skipped: 0 }, rejectedBy: {} };
}

/** Default number of landing records kept; beyond it the oldest are overwritten. */
export const DEFAULT_MAX_LANDING_RECORDS = 1_000_000;

export class LandingLog {
  /**
   * Fixed-capacity ring: record number i (0-based over the whole history) lives at slot i % capacity. The array
   * grows to `capacity` and is then overwritten in place, so add() is O(1) whatever the history length.
   */
  private readonly ring: LandingRecord[] = [];
  /** Records ever added; the ring holds numbers [max(0, added - capacity), added). */
  private added = 0;
  private readonly capacity: number;
  readonly counters = new Map<string, ValidatorCounters>();

  constructor(validators: readonly string[], maxRecords = DEFAULT_MAX_LANDING_RECORDS) {
    if (!(Number.isSafeInteger(maxRecords) && maxRecords >= 1)) throw new RangeError('maxRecords must be a positive integer');
    this.capacity = maxRecords;
    for (const v of validators) this.counters.set(v, emptyCounters());
  }

  countersOf(validator: string): ValidatorCounters {
    let c = this.counters.get(validator);
    if (c === undefined) {
      c = emptyCounters();
      this.counters.set(validator, c);
    }
    return c;
  }

  add(r: LandingRecord): void {
    const i = this.added % this.capacity;
    if (i === this.ring.length) this.ring.push(r);
    else this.ring[i] = r;
    this.added++;
  }

  /** Index of the oldest record still kept. */
  get first(): number {
    return Math.max(0, this.added - this.capacity);
  }

  /** Records with index >= `from`, at most `limit`; `next` is the index to ask for next time. */
  page(from: number, limit: number): { records: readonly LandingRecord[]; first: number; next: number } {
    const start = Math.max(from, this.first);
    const end = Math.min(this.added, start + Math.max(0, limit));
    const records: LandingRecord[] = [];
    for (let i = start; i < end; i++) records.push(this.ring[i % this.capacity]);
    return { records, first: start, next: start + records.length };
  }

  get total(): number {
    return this.added;
  }
}
