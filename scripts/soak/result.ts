// The soak's books (driver process, cold: once at the end): the client's counts, the relay's `relay_stopped` line
// and its last /metrics reconciled per route, the memory and log figures, and the verdict, as one SoakResult.
import { cpus } from 'node:os';
import { byLabel, outcomesFromMetrics, reconcile, sumMetric, type OutcomeTable, type Sample } from './accounting.js';
import type { FaultPlan, FaultRunner } from './faults.js';
import type { Load, RouteName } from './load.js';
import type { BlockhashFollower, HealthWatch, OutcomeTimeline } from './observers.js';
import type { RelayChild, RelayExit } from './relay-child.js';
import { EXPECTED_REFUSALS, latencyTable, type SoakResult, type SoakVerdict } from './report.js';
import type { RssSampler } from './rss.js';
import type { ThreadHeapWatch } from './thread-heaps.js';
import type { StandIn } from './stand-ins.js';

/** Method labels of slotrelay_requests_total that submit a transaction (JSON-RPC method, or the relay path). */
const SUBMISSION_METHODS: readonly string[] = ['sendTransaction', '/v1/submit', '/v1/transactions'];

export interface BookInputs {
  readonly args: { readonly seconds: number; readonly rate: number; readonly workers: number; readonly maxInFlight: number; readonly receiptsCapacity: number | null };
  readonly startedAt: string;
  readonly plan: FaultPlan;
  readonly faults: FaultRunner;
  readonly load: Load;
  readonly relay: RelayChild;
  /** The last /metrics before SIGTERM (null if it could not be read). */
  readonly finalMetrics: Sample[] | null;
  readonly egressSettled: boolean;
  readonly answersSettled: boolean;
  readonly settleAnswersMs: number;
  readonly loadEndS: number;
  readonly loadStartMs: number;
  readonly rss: RssSampler;
  readonly rssEndS: number;
  /** Each thread's V8 heap over the run (which one grew). */
  readonly heaps: ThreadHeapWatch;
  /** The relay's exit after SIGTERM (null: it did not exit in time and was killed). */
  readonly exit: RelayExit | null;
  readonly stopDurationS: number | null;
  /** When the relay exited on its own during the run (null: it did not). */
  readonly crashedAtS: number | null;
  readonly standIns: readonly StandIn[];
  readonly health: HealthWatch;
  readonly blockhash: BlockhashFollower;
  readonly outcomeTimeline: OutcomeTimeline;
  readonly keyDefaultRoutes: readonly RouteName[];
}

/** A summary's quantiles as label value -> quantile -> seconds. */
function quantiles(samples: readonly Sample[], name: string, label: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const x of samples) {
    if (x.name === name && x.labels.quantile !== undefined) (out[x.labels[label] ?? '?'] ??= {})[x.labels.quantile] = x.value;
  }
  return out;
}

/** Per route, the sheds of admission by delay no REST answer showed: those of JSON-RPC requests (none without metrics). */
function jsonRpcShedByRoute(samples: readonly Sample[] | null, restShed: Readonly<Record<RouteName, number>>): Partial<Record<RouteName, number>> {
  const out: Partial<Record<RouteName, number>> = {};
  if (samples === null) return out;
  for (const x of samples) {
    if (x.name !== 'slotrelay_admission_delay_shed_total') continue;
    const r = x.labels.route as RouteName;
    if (r in restShed) out[r] = Math.max(0, x.value - restShed[r]);
  }
  return out;
}

export function closeBooks(x: BookInputs): SoakResult {
  const { args, startedAt, plan, faults, load, relay, finalMetrics, egressSettled, answersSettled, loadEndS, loadStartMs, rss, rssEndS } = x;
  const { exit, stopDurationS, crashedAtS, health, blockhash, outcomeTimeline } = x;
  const stopped = relay.stopped;
  const stoppedOutcomes = stopped?.outcomes as OutcomeTable | undefined;
  const metricsOutcomes = finalMetrics !== null ? outcomesFromMetrics(finalMetrics) : {};
  // A JSON-RPC sendTransaction answer names no routes: the routes admission by delay left out of those requests are
  // the relay's shed counter minus the sheds the REST answers showed (load.ts restShedByRoute).
  const jsonRpcShed = jsonRpcShedByRoute(finalMetrics, load.restShedByRoute);
  const acceptedByRoute = Object.fromEntries(
    Object.entries(load.acceptedByRoute).map(([r, n]) => [r, n - (jsonRpcShed[r as RouteName] ?? 0)]),
  ) as Record<RouteName, number>;
  const rows = reconcile(acceptedByRoute, stoppedOutcomes ?? metricsOutcomes);
  const rowsMetrics = reconcile(acceptedByRoute, metricsOutcomes);
  const unaccounted = rows.reduce((a, r) => a + r.unaccounted, 0);
  const unaccountedAbs = rows.reduce((a, r) => a + Math.abs(r.unaccounted), 0);

  const sets = [...load.sets.entries()];
  const sum = (pick: (s: (typeof sets)[number][1]) => Record<string, number>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [, s] of sets) for (const [k, v] of Object.entries(pick(s))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const clientAccepted = sets.reduce((a, [, s]) => a + s.accepted, 0);
  const refusedByReason = sum((s) => s.refused);
  const transportErrors = sum((s) => s.transport);
  const unexpected = sum((s) => s.unexpected);
  const transportTotal = Object.values(transportErrors).reduce((a, b) => a + b, 0);
  const unexpectedRefusals = Object.entries(refusedByReason).filter(([k]) => !EXPECTED_REFUSALS.includes(k.split(' ')[1] ?? ''));
  const unexpectedAnswers = unexpectedRefusals.reduce((a, [, v]) => a + v, 0) + Object.values(unexpected).reduce((a, b) => a + b, 0);

  const relayAccepted = typeof stopped?.accepted === 'number' ? stopped.accepted : null;
  const restarts = finalMetrics !== null ? sumMetric(finalMetrics, 'slotrelay_egress_worker_restarts_total') : 0;
  const telemetryExits = relay.byEvent.get('telemetry_thread_exit') ?? 0;
  const crashed = crashedAtS !== null || exit === null || exit.signal !== null || restarts > 0 || telemetryExits > 0;
  const rssVerdict = rss.verdict(plan.warmupS, rssEndS);
  const minutes = Math.round((((relay.exit?.atMs ?? Date.now()) - relay.startedAtMs) / 60_000) * 100) / 100;

  const failures: string[] = [];
  // Lost answers (transport errors) may hide accepted transactions from the client: only then may the relay count
  // more than the client saw, and never more than the number of lost answers.
  const unaccountedZero = rows.every((r) => r.unaccounted === 0 || (r.unaccounted < 0 && -r.unaccounted <= transportTotal));
  if (!unaccountedZero) failures.push(`unaccounted ${unaccounted} (per route ${rows.map((r) => `${r.route} ${r.unaccounted}`).join(', ')})`);
  const totalsAgree = relayAccepted !== null && (relayAccepted === clientAccepted || (relayAccepted > clientAccepted && relayAccepted - clientAccepted <= transportTotal));
  if (!totalsAgree) failures.push(`relay accepted ${String(relayAccepted)} vs client accepted ${clientAccepted}`);
  // The front's own count of accepted submissions (slotrelay_requests_total{outcome="ok"} of the submission methods).
  const requestsOk =
    finalMetrics === null ? null : SUBMISSION_METHODS.reduce((a, method) => a + sumMetric(finalMetrics, 'slotrelay_requests_total', { method, outcome: 'ok' }), 0);
  if (requestsOk !== null && requestsOk !== relayAccepted) failures.push(`slotrelay_requests_total ok ${requestsOk} vs relay accepted ${String(relayAccepted)}`);
  if (stopped === null) failures.push('no relay_stopped line');
  // null = too short a run to judge the RSS (reported, not failed); the per-thread heap verdict still applies.
  const rssFlat = rssVerdict === null ? false : rssVerdict.flat;
  if (rssVerdict === null) failures.push('too few RSS samples');
  else if (rssVerdict.flat === false) failures.push(`RSS not flat: last third's peak ${rssVerdict.lastPeakMb} MB > ${rssVerdict.limitMb} MB`);
  const heapVerdict = x.heaps.verdict(plan.warmupS, rssEndS);
  for (const g of heapVerdict.growing) failures.push(`heap growing: ${g.role} ${g.slopeMbPerMin} MB/min, +${g.quarterGrowthMb} MB last quarter vs first`);
  if (crashed) {
    failures.push(
      `relay crashed (${crashedAtS !== null ? `exited at t=${crashedAtS} s` : exit === null ? 'did not exit after SIGTERM' : `exit ${JSON.stringify(exit)}`}, egress restarts ${restarts}, telemetry exits ${telemetryExits})`,
    );
  }
  if (unexpectedAnswers > 0) failures.push(`unexpected answers ${unexpectedAnswers}: ${JSON.stringify(Object.fromEntries(unexpectedRefusals))} ${JSON.stringify(unexpected)}`);
  if (!answersSettled) failures.push(`${load.inFlight} requests still unanswered ${x.settleAnswersMs / 1000} s after the load`);
  const verdict: SoakVerdict = { ok: failures.length === 0, unaccountedZero, totalsAgree, rssFlat, heapFlat: heapVerdict.ok, relayCrashed: crashed, unexpectedAnswers, failures };

  return {
    kind: 'soak',
    startedAt,
    host: { cpus: cpus().length, node: process.version, note: 'shared box: other jobs may run on the same cores' },
    params: {
      seconds: args.seconds,
      ratePerSecond: args.rate,
      workers: args.workers,
      maxInFlight: args.maxInFlight,
      receiptsCapacity: args.receiptsCapacity ?? 'relay default',
      keyDefaultRoutes: x.keyDefaultRoutes,
      staticEveryTransaction: true,
      warmupS: plan.warmupS,
      quietTailS: plan.quietTailS,
      loadEndS,
      egressSettled,
    },
    faults: { planned: plan.faults, executed: faults.records },
    client: {
      issued: sets.reduce((a, [, s]) => a + s.issued, 0),
      accepted: clientAccepted,
      refusedByReason,
      transportErrors,
      unexpected,
      skippedInFlight: load.skippedInFlight,
      skippedBehind: load.skippedBehind,
      routeMismatch: sets.reduce((a, [, s]) => a + s.routeMismatch, 0),
      acceptedByRoute: load.acceptedByRoute,
      restShedByRoute: load.restShedByRoute,
      jsonRpcShedByRoute: jsonRpcShed,
      byRouteSet: Object.fromEntries(sets.map(([name, s]) => [name, { ...s, latency: latencyTable(s.latencyBuckets) }])),
    },
    relay: {
      source: stoppedOutcomes !== undefined ? 'relay_stopped' : 'metrics',
      accepted: relayAccepted,
      records: (stopped?.records as Record<string, number> | undefined) ?? null,
      exit: exit === null ? null : { code: exit.code, signal: exit.signal, afterSigterm: crashedAtS === null },
      stopDurationS,
      relayStopped: stopped,
      metricsBeforeStop:
        finalMetrics === null
          ? {}
          : {
              outcomes: metricsOutcomes,
              rebroadcasts: outcomesFromMetrics(finalMetrics, 'slotrelay_egress_rebroadcasts_total'),
              retry: byLabel(finalMetrics, 'slotrelay_retry_transactions_total', 'outcome'),
              records: byLabel(finalMetrics, 'slotrelay_egress_records_total', 'stage'),
              rejections: byLabel(finalMetrics, 'slotrelay_rejections_total', 'reason'),
              requestsOk: byLabel(finalMetrics, 'slotrelay_requests_total', 'method', { outcome: 'ok' }),
              requestsByOutcome: byLabel(finalMetrics, 'slotrelay_requests_total', 'outcome'),
              // Front-thread time per path, and request arrival -> route outcome per route (the relay's own view).
              requestDurationSeconds: quantiles(finalMetrics, 'slotrelay_request_duration_seconds', 'path'),
              egressLatencySeconds: quantiles(finalMetrics, 'slotrelay_egress_latency_seconds', 'route'),
            },
      egressWorkerRestarts: restarts,
      logEvents: Object.fromEntries(relay.byEvent),
      eventLines: relay.events.map((e) => ({ t: Math.round((e.atMs - loadStartMs) / 100) / 10, line: e.line })),
      logLevels: Object.fromEntries(relay.byLevel),
      warnMessages: Object.fromEntries(relay.warnMessages),
    },
    accounting: { rows, rowsFromMetricsBeforeStop: rowsMetrics, unaccounted, unaccountedAbs, requestsOkBeforeStop: requestsOk },
    rss: { verdict: rssVerdict, samples: rss.samples, heapGrowth: x.heaps.growth(plan.warmupS, rssEndS), heapVerdict, heapSamples: x.heaps.samples },
    logs: { bytes: relay.bytes, lines: relay.lines, minutes, bytesPerMinute: minutes > 0 ? Math.round(relay.bytes / minutes) : 0 },
    standIns: Object.fromEntries(x.standIns.map((p) => [p.kind, { starts: p.starts, received: p.received, unexpectedExits: p.unexpectedExits }])),
    health: { pollsByStatus: health.polls, transitions: health.transitions },
    blockhash: { refreshed: blockhash.refreshed, failures: blockhash.failures, changes: blockhash.changes },
    timeline: load.timeline,
    relayOutcomeWindows: outcomeTimeline.windows,
    verdict,
  };
}
