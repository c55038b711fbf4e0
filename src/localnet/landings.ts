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
export const DropReasons = ['not_leader', 'undecodable', 'invalid', 'rejected'] as const;
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
  return { received: 0, landed: 0, buffered: 0, dropped: { not_leader: 0, undecodable: 0, invalid: 0, rejected: 0 }, rejectedBy: {} };
}

export class LandingLog {
  private readonly records: LandingRecord[] = [];
  /** Index of records[0] in the whole history (records are trimmed from the front). */
  private base = 0;
  readonly counters = new Map<string, ValidatorCounters>();

  constructor(
    validators: readonly string[],
    private readonly maxRecords = 1_000_000,
  ) {
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
    this.records.push(r);
    if (this.records.length > this.maxRecords) {
      const drop = this.records.length - this.maxRecords;
      this.records.splice(0, drop);
      this.base += drop;
    }
  }

  /** Records with index >= `from`, at most `limit`; `next` is the index to ask for next time. */
  page(from: number, limit: number): { records: readonly LandingRecord[]; first: number; next: number } {
    const start = Math.max(from, this.base);
    const slice = this.records.slice(start - this.base, start - this.base + limit);
    return { records: slice, first: start, next: start + slice.length };
  }

  get total(): number {
    return this.base + this.records.length;
  }
}
