// Seeded randomness for the live fuzzer (harness process, main thread; hot while generating cases). Every case is
// generated from its own generator, derived from (run seed, case index), so one case can be rebuilt alone from the
// seed and its index. Structure decisions use the small sfc32 generator below; odd JSON values come from fast-check
// arbitraries sampled with a seed drawn from it, so they are reproducible too.
import fc from 'fast-check';

/** splitmix32 step: spreads a 32-bit input over all 32 bits. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    this.a = mix32(seed);
    this.b = mix32(this.a ^ stream);
    this.c = mix32(this.b + 0x6d2b79f5);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** sfc32. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return n <= 1 ? 0 : Math.floor((this.u32() / 4294967296) * n);
  }

  /** Integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.u32() / 4294967296 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Pick by weight: [[weight, value], ...]. */
  weighted<T>(table: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of table) total += w;
    let r = (this.u32() / 4294967296) * total;
    for (const [w, v] of table) {
      if (r < w) return v;
      r -= w;
    }
    return table[table.length - 1][1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }

  /** One value of a fast-check arbitrary, reproducible from this generator's state. */
  sample<T>(arb: fc.Arbitrary<T>): T {
    return fc.sample(arb, { seed: this.u32() | 0, numRuns: 1 })[0];
  }
}

/** The generator of case `index` of the run with `seed`. */
export function caseRng(seed: number, index: number): Rng {
  return new Rng(seed, mix32(index ^ 0x5bd1e995));
}

/** A fresh run seed (when none is given): 32 bits from the clock and Math.random, printed so the run can be repeated. */
export function randomSeed(): number {
  return mix32((Date.now() ^ Math.floor(Math.random() * 4294967296)) >>> 0);
}
