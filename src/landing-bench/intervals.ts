// Landed shares with 95% intervals and the differences between route sets (CLI process; cold, once per scenario).
// Wilson's score interval for one proportion, Newcombe's hybrid score interval (his method 10, 1998) for a difference
// of two independent proportions: both stay inside [0, 1] / [-1, 1] and behave at shares of 0 and 100%, where the
// normal approximation (p ± 1.96·sqrt(p(1-p)/n)) collapses to a zero-width interval.

/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

export interface Share {
  readonly landed: number;
  readonly sent: number;
  /** landed / sent (0 when nothing was sent). */
  readonly share: number;
  /** Wilson 95% interval of the share. */
  readonly lo: number;
  readonly hi: number;
}

/** Wilson's score interval for x successes of n (n = 0: the whole [0, 1]). */
export function wilson(x: number, n: number, z = Z95): Share {
  if (n <= 0) return { landed: 0, sent: 0, share: 0, lo: 0, hi: 1 };
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // Clamped against rounding: at x = 0 the lower bound is 0 exactly, at x = n the upper is 1.
  return { landed: x, sent: n, share: p, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
}

export interface Difference {
  /** a.share - b.share. */
  readonly diff: number;
  /** Newcombe's hybrid score 95% interval of the difference. */
  readonly lo: number;
  readonly hi: number;
  /** The interval holds 0: the run cannot tell the two apart. */
  readonly significant: boolean;
}

/** Newcombe's method 10: the difference a - b with an interval built from each share's Wilson interval. */
export function newcombe(a: Share, b: Share): Difference {
  const d = a.share - b.share;
  const lo = d - Math.sqrt((a.share - a.lo) ** 2 + (b.hi - b.share) ** 2);
  const hi = d + Math.sqrt((a.hi - a.share) ** 2 + (b.share - b.lo) ** 2);
  return { diff: d, lo: Math.max(-1, lo), hi: Math.min(1, hi), significant: lo > 0 || hi < 0 };
}

export interface Comparison extends Difference {
  /** The set compared (its name) and the one it is compared with: the run's best landed share. */
  readonly set: string;
  readonly against: string;
}

/**
 * Each set against the best (highest landed share; the first of a tie): one row per other set. "Not significant"
 * where the interval holds 0. No correction for the several comparisons: with four sets, three intervals of 95% each.
 */
export function againstBest(shares: readonly { readonly name: string; readonly share: Share }[]): Comparison[] {
  if (shares.length < 2) return [];
  let best = shares[0];
  for (const s of shares) if (s.share.share > best.share.share) best = s;
  return shares.filter((s) => s !== best).map((s) => ({ set: s.name, against: best.name, ...newcombe(s.share, best.share) }));
}

/** A share or difference as a rounded percentage (two decimals). */
export const pct2 = (x: number): number => Math.round(x * 10_000) / 100;
