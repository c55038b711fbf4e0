// The soak's books (driver process, cold: once at the end, and per /metrics poll while waiting for the egress to
// settle). Parses the relay's Prometheus text and reconciles, per route, what the client was told was accepted with
// the relay's own outcome counters: accepted-with-route = sent + failed + dropped:* (each by reason). unaccounted =
// client accepted - outcomes: positive means transactions the relay promised and never accounted for; negative means
// outcomes the client cannot explain (possible only when answers were lost, i.e. transport failures).
import type http from 'node:http';
import { isTransportFailure, request } from './http.js';
import { ROUTES, type RouteName } from './load.js';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Prometheus text -> samples (comment lines skipped; labels unescaped for \\, \" and \n). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    if (m[3] !== undefined) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      for (let l = re.exec(m[3]); l !== null; l = re.exec(m[3])) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
      }
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** GET /metrics parsed, or null when it could not be read (transport failure or a status other than 200). */
export async function scrapeMetrics(agent: http.Agent, baseUrl: string, timeoutMs: number): Promise<Sample[] | null> {
  const a = await request(agent, baseUrl, 'GET', '/metrics', {}, null, timeoutMs);
  return isTransportFailure(a) || a.status !== 200 ? null : parseMetrics(a.body);
}

export type OutcomeTable = Record<string, Record<string, number>>;

/** slotrelay_egress_outcomes_total as route -> outcome -> count (zeros left out). */
export function outcomesFromMetrics(samples: readonly Sample[], metric = 'slotrelay_egress_outcomes_total'): OutcomeTable {
  const t: OutcomeTable = {};
  for (const s of samples) {
    if (s.name !== metric || s.value === 0) continue;
    const route = s.labels.route ?? '?';
    (t[route] ??= {})[s.labels.outcome ?? '?'] = s.value;
  }
  return t;
}

/** Sum of one metric's samples whose labels match every given label. */
export function sumMetric(samples: readonly Sample[], name: string, match: Readonly<Record<string, string>> = {}): number {
  let n = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) n += s.value;
  }
  return n;
}

/** One metric's samples grouped by one label. */
export function byLabel(samples: readonly Sample[], name: string, label: string, match: Readonly<Record<string, string>> = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name || s.value === 0) continue;
    if (!Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    const key = s.labels[label] ?? '?';
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

export interface RouteRow {
  readonly route: RouteName;
  /** Client-side: accepted transactions that went to this route. */
  readonly accepted: number;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly outcomesSum: number;
  readonly unaccounted: number;
}

export function reconcile(acceptedByRoute: Readonly<Record<RouteName, number>>, outcomes: Readonly<OutcomeTable>): RouteRow[] {
  return ROUTES.map((route) => {
    const o = outcomes[route] ?? {};
    const outcomesSum = Object.values(o).reduce((a, b) => a + b, 0);
    return { route, accepted: acceptedByRoute[route], outcomes: o, outcomesSum, unaccounted: acceptedByRoute[route] - outcomesSum };
  });
}

/** The table as text: one row per route, outcome columns in a stable order (sent, failed, then drops by name). */
export function formatTable(rows: readonly RouteRow[]): string {
  const cols = new Set<string>(['sent', 'failed']);
  for (const r of rows) for (const k of Object.keys(r.outcomes).sort()) cols.add(k);
  const header = ['route', 'accepted', ...cols, 'sum', 'unaccounted'];
  const lines = rows.map((r) => [r.route, String(r.accepted), ...[...cols].map((c) => String(r.outcomes[c] ?? 0)), String(r.outcomesSum), String(r.unaccounted)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(header), ...lines.map(fmt)].join('\n');
}
