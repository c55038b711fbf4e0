// What the egress pool (./pool.ts) shares with the owners of its three thread roles (./egress-host.ts,
// ./quic-egress-host.ts, ./quic-link-host.ts): the pool's options, the shared buffers, and the hooks through which an
// owner reports a thread ready or its kernel thread id. Main thread, cold.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../config/schema.js';
import type { RoutePlan } from '../../config/route-plan.js';
import type { Logger } from '../../log/logger.js';
import type { LatencyAggregator } from '../../metrics/histogram-merge.js';
import type { QuicLink } from '../../shm/quic-link-layout.js';
import type { EgressTestHooks } from './consumer-loop.js';

export interface EgressPoolOptions {
  readonly config: Config;
  readonly log: Logger;
  /** Compiled worker module; default dist/workers/egress-worker.js next to this file's dist/src/egress/. */
  readonly workerFile?: URL;
  /** Rings made by the caller (createEgressRings); default: made here from config.rings. */
  readonly rings?: readonly SharedArrayBuffer[];
  /** Test-only fault injection, per ring index. */
  readonly testHooks?: Readonly<Record<number, EgressTestHooks>>;
  /** First restart delay of every thread of the pool (default: the roles' rows in src/threads/policies.ts). */
  readonly restartBackoffMs?: number;
  /** The telemetry thread's leader-slot snapshot, handed to every worker (the direct route's leader source). */
  readonly snapshot?: SharedArrayBuffer;
  /** Makes one measurement port per worker task (TelemetryThread.measurementPort). */
  readonly measurementPort?: () => MessagePort;
  /** A generated relay identity's secret, handed to every consumer task (never written to disk). */
  readonly identitySecret?: Uint8Array;
  /** The landing receipts' shared part (src/shm/receipts-layout.ts); absent = receipts off. */
  readonly receipts?: SharedArrayBuffer;
  /** The adaptive routing's widen table (src/shm/widen-layout.ts), for the direct route; absent = routing.adaptive off. */
  readonly widen?: SharedArrayBuffer;
  /** Admission by delay's board (src/shm/sojourn-layout.ts), one row per ring; absent = sojourn not judged. */
  readonly sojourn?: SharedArrayBuffer;
  /**
   * The frozen route plan. With it the workers build only the HTTP routes, and when plan.quicThread the QUIC threads
   * run (their ring: quicRing). Absent (tests, benches): every worker builds every route, no QUIC thread.
   */
  readonly plan?: RoutePlan;
  /** Compiled QUIC thread module (quic-egress and quic-link threads); default dist/workers/quic-threads.js. */
  readonly quicWorkerFile?: URL;
  /** Test-only fault injection for quic-link threads (QUIC thread k >= 1), by k (first attempt only). */
  readonly quicLinkTestHooks?: Readonly<Record<number, { readonly crashAfterSends?: number }>>;
}

export interface PoolContext {
  readonly options: EgressPoolOptions;
  /** Every ring, the QUIC ring last (index = counter region). */
  readonly allRings: readonly SharedArrayBuffer[];
  readonly counters: SharedArrayBuffer;
  readonly join: SharedArrayBuffer | null;
  readonly quicLinks: readonly QuicLink[];
  readonly latency: LatencyAggregator;
  /** The config a task starts with (a reload's log level included). */
  config(): Config;
  /** Slot `index` (a ring, then the links) reported its routes warm (consumer-ready.ts); stays ready across restarts. */
  markReady(index: number): void;
  /** QUIC thread `thread` (0: quic-egress, k: quic-link k) reported its kernel thread id. */
  setQuicTid(thread: number, tid: number): void;
  /** The restart line's fields of slot `index`: its ring label and depth. */
  restartFields(index: number): Record<string, unknown>;
}
