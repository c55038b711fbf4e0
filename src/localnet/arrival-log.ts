// TPU arrival log for benches (localnet process, main thread; add() is HOT: every transaction any TPU listener reads,
// before the leader gate, landed or not). Off unless the `localnet.arrivalLog` capacity is set. Keeps, per arrival,
// the first 8 bytes of the transaction's first signature and the CLOCK_MONOTONIC time (process.hrtime.bigint() ns,
// comparable with process.hrtime.bigint() in any process on this host) at which the listener read the stream to FIN.
// A bench matches them to the send times it took itself (bench/wire/). Exposed as `localnet_getArrivals`
// (facade/methods-localnet.ts). Fixed arrays, no allocation per arrival.
export interface ArrivalPage {
  /** Index of the first record returned (older ones were overwritten or never existed). */
  readonly first: number;
  /** Index to ask for next. */
  readonly next: number;
  /** Per record: first 8 signature bytes as 16 lowercase hex digits. */
  readonly sig8: string[];
  /** Per record: arrival ns (decimal string: may exceed 2^53). */
  readonly arrivalNs: string[];
}

export class ArrivalLog {
  private readonly sig: Uint32Array;
  private readonly at: BigInt64Array;
  private added = 0;

  constructor(readonly capacity: number) {
    if (!(Number.isSafeInteger(capacity) && capacity >= 1)) throw new RangeError('capacity must be a positive integer');
    this.sig = new Uint32Array(capacity * 2);
    this.at = new BigInt64Array(capacity);
  }

  get total(): number {
    return this.added;
  }

  /** `tx` = wire transaction (byte 0: signature count); one shorter than 9 bytes is logged with a zero prefix. */
  add(tx: Uint8Array, arrivalNs: bigint): void {
    const i = this.added % this.capacity;
    this.added++;
    if (tx.length >= 9) {
      this.sig[2 * i] = (tx[1] | (tx[2] << 8) | (tx[3] << 16) | (tx[4] << 24)) >>> 0;
      this.sig[2 * i + 1] = (tx[5] | (tx[6] << 8) | (tx[7] << 16) | (tx[8] << 24)) >>> 0;
    } else {
      this.sig[2 * i] = 0;
      this.sig[2 * i + 1] = 0;
    }
    this.at[i] = arrivalNs;
  }

  page(from: number, limit: number): ArrivalPage {
    const first = Math.max(from, this.added - this.capacity, 0);
    const end = Math.min(this.added, first + limit);
    const sig8: string[] = [];
    const arrivalNs: string[] = [];
    for (let n = first; n < end; n++) {
      const i = n % this.capacity;
      sig8.push(hex8(this.sig[2 * i]) + hex8(this.sig[2 * i + 1]));
      arrivalNs.push(this.at[i].toString());
    }
    return { first, next: Math.max(end, first), sig8, arrivalNs };
  }
}

/** A little-endian uint32 as the hex of its 4 bytes in memory order (so sig8 reads like the signature's bytes). */
function hex8(v: number): string {
  let s = '';
  for (let b = 0; b < 4; b++) s += ((v >>> (8 * b)) & 0xff).toString(16).padStart(2, '0');
  return s;
}
