// The egress consumer's task and its injected parts (cold: built once per consumer start). The pool (./pool.ts) sends
// an EgressTask to each egress worker and to QUIC thread 0 (structured-cloned; SharedArrayBuffers are shared, ports
// transferred); tests and benches pass ConsumerDeps to replace routes, the logger or the retry scheduler.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import type { RouteFamily, RoutePlan } from '../../config/route-plan.js';
import type { EgressRoute } from '../contract/route.js';
import type { RetryScheduler } from '../rebroadcast/retry-scheduler.js';
import type { QuicLink } from '../../shm/quic-link-layout.js';
import type { LocalDispatch } from '../../ingress/local-admission.js';

/** Test-only fault injection, passed by the pool in the task payload (never read from the environment). */
export interface EgressTestHooks {
  /** On the first attempt only: crash when taking record number N + 1. */
  readonly crashAfterRecords?: number;
  /** On the first attempt only: crash when dispatching local transaction number N + 1 (QUIC thread, local admission). */
  readonly crashAfterLocal?: number;
  /** 'throw': the task rejects (thread survives); 'exit': process.exit() ends the worker thread. */
  readonly crashMode?: 'throw' | 'exit';
}

/** The Piscina task payload (structured-cloned; SharedArrayBuffers are shared, the port is transferred). */
export interface EgressTask {
  readonly ringIndex: number;
  readonly ring: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** The validated config. It travels here, not in workerData; workers/egress-worker.ts deep-freezes the clone. */
  readonly config: Config;
  /** 0 on the first run for this ring, +1 per restart. */
  readonly attempt: number;
  /** Where latency histograms are posted (histogram-merge.ts); absent = not recorded. */
  readonly latencyPort?: MessagePort;
  readonly testHooks?: EgressTestHooks;
  /** The telemetry thread's leader-slot snapshot: the direct route's leader source (one source of truth). */
  readonly snapshot?: SharedArrayBuffer;
  /** Where the QUIC routes report connection measurements (telemetry/measurements.ts). */
  readonly measurementPort?: MessagePort;
  /**
   * The relay identity main generated in memory (64-byte secret; src/egress/quic/identity.ts), for the QUIC routes. Absent
   * when identity.keypairPath names the keypair (loaded from the file, hot-reloaded) or no QUIC route is enabled.
   */
  readonly identitySecret?: Uint8Array;
  /** The landing receipts' shared part (src/shm/receipts-layout.ts); absent = receipts off. */
  readonly receipts?: SharedArrayBuffer;
  /** The adaptive routing's widen table (src/shm/widen-layout.ts); absent = routing.adaptive off. */
  readonly widen?: SharedArrayBuffer;
  /**
   * The frozen route plan (src/config/route-plan.ts) and which family of routes this consumer owns: 'workers' (rpc,
   * jito) in the egress pool, 'quic' (direct, static) in the quic-egress thread. Absent (tests, benches): every route here.
   */
  readonly plan?: RoutePlan;
  readonly family?: RouteFamily;
  /** The join table of records published into two rings (src/shm/join.ts); absent = no record has a join entry. */
  readonly join?: SharedArrayBuffer;
  /** Admission by delay's board (src/shm/sojourn-layout.ts): this consumer writes row ringIndex; absent = not judged. */
  readonly sojourn?: SharedArrayBuffer;
  /** QUIC thread only: where the telemetry probe's requests arrive (src/telemetry/probe-relay.ts). */
  readonly probePort?: MessagePort;
  /** QUIC thread only: where jobs it hosts (the QUIC ingress) are asked for (src/egress/quic/hosted-jobs.ts). */
  readonly hostPort?: MessagePort;
  /** QUIC thread 0 of several (rings.quicThreads > 1): its links to threads 1..N-1 (src/shm/quic-link-layout.ts). */
  readonly quicLinks?: readonly QuicLink[];
}

export interface ConsumerDeps {
  /**
   * QUIC thread: receives this loop's local dispatch (src/ingress/local-admission.ts) once the routes are built, and
   * null when the loop ended (the QUIC ingress then sends everything through the front again).
   */
  readonly exposeLocal?: (d: LocalDispatch | null) => void;
  /** Routes by id (index = ROUTE_IDS value); null = not available in this relay. Default: built from config. */
  readonly routes?: readonly (EgressRoute | null)[];
  readonly log?: Logger;
  /** Rebroadcast scheduler (retry-scheduler.ts); null = no rebroadcasts. Default: built from config (none with routes.discard). */
  readonly retry?: RetryScheduler | null;
}

