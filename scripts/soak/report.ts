// The soak's result (driver process, cold: once at the end): the JSON written to bench/results/soak.json by
// `make soak`, the verdict, and the text printed to the terminal.
import { formatTable, type RouteRow } from './accounting.js';
import type { FaultRecord } from './faults.js';
import type { HealthTransition, OutcomeWindow } from './observers.js';
import type { RssSample, RssVerdict } from './rss.js';
import type { HeapGrowth, HeapSample, HeapVerdict } from './thread-heaps.js';
import type { SetStats, TimelineBucket } from './load.js';
import { LATENCY_BUCKET_LABELS } from './load.js';

/** Refusal reasons that are correct answers during faults (no route can deliver, rings full). */
export const EXPECTED_REFUSALS: readonly string[] = ['routes_unavailable', 'overloaded'];

export interface SoakVerdict {
  readonly ok: boolean;
  readonly unaccountedZero: boolean;
  readonly totalsAgree: boolean;
  /** null: the run was too short to judge the RSS (rss.ts MIN_JUDGED_S). */
  readonly rssFlat: boolean | null;
  /** No thread role's live heap kept growing (thread-heaps.ts). */
  readonly heapFlat: boolean;
  readonly relayCrashed: boolean;
  readonly unexpectedAnswers: number;
  readonly failures: readonly string[];
}

export interface SoakResult {
  readonly kind: 'soak';
  readonly startedAt: string;
  readonly host: { readonly cpus: number; readonly node: string; readonly note: string };
  readonly params: Readonly<Record<string, unknown>>;
  readonly faults: { readonly planned: readonly unknown[]; readonly executed: readonly FaultRecord[] };
  readonly client: {
    readonly issued: number;
    readonly accepted: number;
    readonly refusedByReason: Readonly<Record<string, number>>;
    readonly transportErrors: Readonly<Record<string, number>>;
    readonly unexpected: Readonly<Record<string, number>>;
    readonly skippedInFlight: number;
    readonly skippedBehind: number;
    readonly routeMismatch: number;
    readonly acceptedByRoute: Readonly<Record<string, number>>;
    /** Routes REST answers left out (admission by delay) and, from the relay's shed counter, JSON-RPC's. */
    readonly restShedByRoute: Readonly<Record<string, number>>;
    readonly jsonRpcShedByRoute: Readonly<Record<string, number>>;
    readonly byRouteSet: Readonly<Record<string, SetStats & { readonly latency: Readonly<Record<string, number>> }>>;
  };
  readonly relay: {
    readonly source: 'relay_stopped' | 'metrics';
    readonly accepted: number | null;
    readonly records: Readonly<Record<string, number>> | null;
    readonly exit: { readonly code: number | null; readonly signal: string | null; readonly afterSigterm: boolean } | null;
    readonly stopDurationS: number | null;
    readonly relayStopped: unknown;
    readonly metricsBeforeStop: Readonly<Record<string, unknown>>;
    readonly egressWorkerRestarts: number;
    readonly logEvents: Readonly<Record<string, number>>;
    /** Event lines (not log_summary) with t = seconds since the load started. */
    readonly eventLines: readonly { readonly t: number; readonly line: string }[];
    readonly logLevels: Readonly<Record<string, number>>;
    readonly warnMessages: Readonly<Record<string, number>>;
  };
  readonly accounting: {
    readonly rows: readonly RouteRow[];
    readonly rowsFromMetricsBeforeStop: readonly RouteRow[];
    readonly unaccounted: number;
    readonly unaccountedAbs: number;
    /** slotrelay_requests_total{outcome="ok"} over the submission methods, from the last /metrics. */
    readonly requestsOkBeforeStop: number | null;
  };
  readonly rss: {
    readonly verdict: RssVerdict | null;
    readonly samples: readonly RssSample[];
    /** Per thread role, V8 heap used after warm-up: start, end, max, slope (largest slope first). */
    readonly heapGrowth: readonly HeapGrowth[];
    readonly heapVerdict: HeapVerdict;
    readonly heapSamples: readonly HeapSample[];
  };
  readonly logs: { readonly bytes: number; readonly lines: number; readonly minutes: number; readonly bytesPerMinute: number };
  readonly standIns: Readonly<Record<string, { readonly starts: number; readonly received: number; readonly unexpectedExits: number }>>;
  readonly health: { readonly pollsByStatus: Readonly<Record<string, number>>; readonly transitions: readonly HealthTransition[] };
  readonly blockhash: { readonly refreshed: number; readonly failures: number; readonly changes: number };
  /** Client answers per window (accepted, refused by reason, transport failures). */
  readonly timeline: readonly TimelineBucket[];
  /** The relay's first-send outcomes per window, from /metrics during the run. */
  readonly relayOutcomeWindows: readonly OutcomeWindow[];
  readonly verdict: SoakVerdict;
}

export function latencyTable(buckets: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  buckets.forEach((n, i) => {
    if (n > 0) out[LATENCY_BUCKET_LABELS[i]] = n;
  });
  return out;
}

export function printReport(r: SoakResult): string {
  const lines: string[] = [];
  const c = r.client;
  lines.push(`soak: ${String(r.params.seconds)} s at ${String(r.params.ratePerSecond)} tx/s, ${r.faults.executed.length} faults`);
  for (const f of r.faults.executed) {
    const bits = [`  t=${f.atS}s ${f.kind}`];
    if (f.localnetPid !== undefined) bits.push(`localnet pid ${String(f.localnetPid)} back after ${String(f.localnetBackAfterS)} s`);
    if (f.downS !== undefined) bits.push(`stand-in down ${f.downS} s`);
    if (f.error !== undefined) bits.push(`ERROR ${f.error}`);
    lines.push(bits.join(', '));
  }
  lines.push('');
  lines.push('client, per route set: issued / accepted / refused (by reason) / transport errors');
  for (const [name, s] of Object.entries(c.byRouteSet)) {
    const refused = Object.entries(s.refused).map(([k, v]) => `${k}: ${v}`).join(', ');
    const transport = Object.entries(s.transport).map(([k, v]) => `${k}: ${v}`).join(', ');
    lines.push(`  ${name.padEnd(40)} ${String(s.issued).padStart(7)} ${String(s.accepted).padStart(7)}  ${refused || '-'}  ${transport ? `transport ${transport}` : ''}`);
  }
  lines.push(`  total issued ${c.issued}, accepted ${c.accepted}, skipped (in flight ${c.skippedInFlight}, behind ${c.skippedBehind}), route mismatches ${c.routeMismatch}`);
  lines.push(`  refused by reason: ${JSON.stringify(c.refusedByReason)}; transport: ${JSON.stringify(c.transportErrors)}; unexpected: ${JSON.stringify(c.unexpected)}`);
  lines.push('');
  lines.push(`per route: client accepted vs relay outcomes (${r.relay.source === 'relay_stopped' ? 'relay_stopped line' : '/metrics before SIGTERM'})`);
  lines.push(formatTable(r.accounting.rows));
  lines.push(`routes shed by admission by delay: REST answers ${JSON.stringify(c.restShedByRoute)}, JSON-RPC (relay counter - REST) ${JSON.stringify(c.jsonRpcShedByRoute)}; client accepted per route is net of both`);
  lines.push(`unaccounted: ${r.accounting.unaccounted} (sum of |client - relay| over routes: ${r.accounting.unaccountedAbs})`);
  lines.push(
    `relay accepted ${String(r.relay.accepted)} (requests_total ok ${String(r.accounting.requestsOkBeforeStop)}), client accepted ${c.accepted}; records ${JSON.stringify(r.relay.records)}`,
  );
  lines.push('');
  const v = r.rss.verdict;
  lines.push(
    v === null
      ? 'rss: too few samples'
      : `rss (relay): start ${v.startMb} MB (after warm-up), end ${v.endMb} MB, max ${v.maxMb} MB, slope ${v.slopeMbPerMin} MB/min; peaks: middle third ${v.middlePeakMb} MB, last third ${v.lastPeakMb} MB; ${v.flat === null ? 'not judged (short run)' : v.flat ? 'flat' : 'NOT flat'} (${v.rule}: limit ${v.limitMb} MB)`,
  );
  if (r.rss.heapGrowth.length > 0) {
    lines.push(`heap: ${r.rss.heapVerdict.ok ? 'flat' : 'GROWING'} (${r.rss.heapVerdict.rule}); judged ${r.rss.heapVerdict.judged.join(', ')}`);
    lines.push('live heap per thread role (MB, after warm-up): ' + r.rss.heapGrowth.map((g) => `${g.role} ${g.startMb} -> ${g.endMb} (max ${g.maxMb}, ${g.slopeMbPerMin} MB/min)`).join('; '));
  }
  lines.push(`logs: ${r.logs.bytes} bytes in ${r.logs.minutes} min = ${r.logs.bytesPerMinute} bytes/min (${r.logs.lines} lines)`);
  lines.push(`relay exit: ${JSON.stringify(r.relay.exit)}, stop took ${String(r.relay.stopDurationS)} s, egress worker restarts ${r.relay.egressWorkerRestarts}`);
  lines.push(`health: ${JSON.stringify(r.health.pollsByStatus)} (polls per status), ${r.health.transitions.length} transitions`);
  lines.push('');
  lines.push(r.verdict.ok ? 'SOAK OK' : `SOAK FAILED: ${r.verdict.failures.join('; ')}`);
  return lines.join('\n');
}

/**
 * JSON for the results file, readable in a diff: objects indented down to `depth`, deeper values on one line, and
 * arrays one element per line (samples, windows and event lines stay one line each).
 */
export function resultJson(value: unknown, depth = 3, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const inner = indent + '  ';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
    return '[\n' + value.map((v) => inner + JSON.stringify(v)).join(',\n') + '\n' + indent + ']';
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  if (depth <= 0) return JSON.stringify(value);
  return '{\n' + entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${resultJson(v, depth - 1, inner)}`).join(',\n') + '\n' + indent + '}';
}
