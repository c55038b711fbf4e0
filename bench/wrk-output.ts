// Reading wrk's text report (`wrk --latency`): the figures every end-to-end bench prints. Cold: once per run.

export interface WrkFigures {
  readonly requestsPerSec: number;
  readonly p50ms: number;
  readonly p90ms: number;
  readonly p99ms: number;
  readonly non2xx: number;
  readonly requests: number;
}

/** "812.00us" / "1.23ms" / "2.01s" -> milliseconds (NaN when absent). */
function msOf(v: string | undefined): number {
  const m = /([\d.]+)(us|ms|s)/.exec(v ?? '');
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

export function parseWrkOutput(out: string): WrkFigures {
  const pct = (p: string) => msOf(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1]);
  return {
    requestsPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50ms: pct('50'),
    p90ms: pct('90'),
    p99ms: pct('99'),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
  };
}
