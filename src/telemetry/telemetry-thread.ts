// TelemetryThread (main thread, cold): owns the leader-slot snapshot buffer and supervises the dedicated telemetry
// worker_thread (dist/workers/telemetry-worker.js) that fills it. If the thread dies it is restarted after a backoff
// (src/threads/supervisor.ts, the telemetry row of src/threads/policies.ts; telemetry.restartBackoffMs is the first
// delay); the new thread attaches the same buffer and
// continues the generation count. While it is down nothing is published: the snapshot ages and getLeaderSlots fails
// closed (stale) — readers never see a half-written snapshot.
//
// Egress workers report route measurements through measurementPort(): the main thread keeps one end and forwards
// each batch to whichever telemetry thread is current, so reports survive telemetry restarts. The pool asks for a
// new port per egress task (every restart); a port is dropped when its other end closes (the worker thread exited)
// or when it stays silent for PORT_SILENT_MS (the task ended but Piscina kept the thread: egress posts a batch,
// empty or not, every second while it runs), so restarts do not accumulate ports.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ClusterConfig, GeyserSourceConfig, TelemetryConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../log/logger.js';
import { isLogLevelMessage, logLevelMessage, type LogLevel } from '../log/log-level-message.js';
import { isRouteMeasurementBatch } from './measurements.js';
import type { OfferedRoutes } from '../config/route-plan.js';
import { createSnapshotBuffer } from '../shm/snapshot-layout.js';
import { TelemetryFollower, type TelemetryWorkerData } from './telemetry-main.js';
import type { GeyserWatch } from './geyser/geyser-messages.js';
import type { RegionShareFactory } from './region-share.js';
import { ProbeClient, isProbeAnswer, isProbeRequest, unmeasured, type ProbeAnswer, type Prober } from './probe-relay.js';
import { Supervisor, workerRun, type SupervisedRun } from '../threads/supervisor.js';
/** A measurement port with no batch for this long belongs to an egress task that ended: closed (reports come every 1 s). */
const PORT_SILENT_MS = 30_000;

/** Agave's convention: PubSub on the RPC port + 1, ws(s):// for http(s)://. */
export function defaultWsUrl(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  const secure = u.protocol === 'https:';
  const port = Number(u.port || (secure ? 443 : 80)) + 1;
  u.protocol = secure ? 'wss:' : 'ws:';
  u.port = String(port);
  return u.toString();
}

export interface TelemetryThreadOptions {
  readonly telemetry: TelemetryConfig;
  /** Cluster JSON-RPC (telemetry.rpcUrl ?? upstream.rpcUrl). */
  readonly rpcUrl: string;
  /** The routes the relay offers (the route plan's, src/config/route-plan.ts): the txPaths rows list. */
  readonly routes: OfferedRoutes;
  readonly logLevel: string;
  readonly log: Logger;
  /** Default: dist/workers/telemetry-worker.js next to this module's dist/src/telemetry/. */
  readonly workerFile?: URL;
  /** Tests only: the worker honours {type: 'crash'}. */
  readonly allowTestCrash?: boolean;
  /** In a cluster: shared telemetry through the engine (src/cluster/telemetry-share.ts). */
  readonly cluster?: ClusterConfig & { readonly url: string };
  /** The thread's shared-telemetry status messages (cluster only). */
  readonly onClusterStatus?: (status: unknown) => void;
  /** The probe's handshakes run in the QUIC thread (route plan probe 'quic-thread'): see setProber(). */
  readonly probeInQuicThread?: boolean;
  /** upstream.grpc: the Yellowstone gRPC slot source (src/telemetry/geyser/). */
  readonly grpc?: GeyserSourceConfig;
}

export class TelemetryThread {
  readonly snapshot: SharedArrayBuffer;
  private worker: Worker | null = null;
  private stopping = false;
  private readonly supervisor: Supervisor;
  /** Measurement ports (main-thread ends) -> when their last batch arrived. */
  private readonly ports = new Map<MessagePort, number>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private data: TelemetryWorkerData;

  constructor(private readonly o: TelemetryThreadOptions) {
    this.snapshot = createSnapshotBuffer(o.telemetry.snapshotCapacityBytes);
    this.data = {
      telemetry: o.telemetry,
      rpcUrl: o.rpcUrl,
      routes: o.routes,
      wsUrl: o.telemetry.wsUrl ?? defaultWsUrl(o.rpcUrl),
      logLevel: o.logLevel,
      snapshot: this.snapshot,
      allowTestCrash: o.allowTestCrash ?? false,
      cluster: o.cluster,
      probeVia: o.probeInQuicThread === true ? 'parent' : undefined,
      grpc: o.grpc,
    };
    this.supervisor = new Supervisor({
      role: 'telemetry',
      log: o.log,
      policy: { firstBackoffMs: o.telemetry.restartBackoffMs },
      message: 'telemetry thread exited; restarting (the snapshot ages meanwhile)',
      launch: ({ ready }) => this.launch(ready),
      onEnded: () => {
        this.worker = null;
      },
    });
  }

  /** Times the thread died and was restarted. */
  get restarts(): number {
    return this.supervisor.restarts;
  }

  /** Where the thread's probe requests go (EgressPool.probe: the QUIC thread); until set, targets stay unmeasured. */
  private prober: Prober | null = null;

  setProber(prober: Prober): void {
    this.prober = prober;
  }

  start(): void {
    if (this.stopping) return;
    this.supervisor.start();
  }

  private launch(ready: () => void): SupervisedRun {
    const file = this.o.workerFile ?? new URL('../../workers/telemetry-worker.js', import.meta.url);
    const w = new Worker(file, { workerData: this.data, name: 'telemetry' });
    this.worker = w;
    w.once('online', ready); // no handshake of its own: running is enough (no start-up timeout in its row)
    if (this.lastWatch !== null) w.postMessage(this.lastWatch);
    w.on('message', (m: unknown) => {
      if (!isProbeRequest(m)) {
        this.o.onClusterStatus?.(m);
        return;
      }
      const answer = (results: ProbeAnswer['results']): void => {
        if (this.worker === w) w.postMessage({ type: 'probe-answer', id: m.id, results } satisfies ProbeAnswer);
      };
      if (this.prober === null) answer(unmeasured(m.targets));
      else void this.prober(m.targets, m.timeoutMs).then(answer, () => answer(unmeasured(m.targets)));
    });
    w.on('error', (err) => this.o.log.error({ err, event: 'telemetry_thread_error' }, 'telemetry thread failed'));
    return workerRun(w);
  }

  /** A port for one egress task (transfer it): batches posted on it reach the current telemetry thread. */
  measurementPort(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    this.ports.set(port1, Date.now());
    port1.on('message', (m: unknown) => {
      if (!isRouteMeasurementBatch(m)) return;
      this.ports.set(port1, Date.now());
      if (m.items.length > 0) this.worker?.postMessage(m);
    });
    port1.once('close', () => this.ports.delete(port1));
    port1.unref();
    if (this.sweepTimer === null && !this.stopping) {
      this.sweepTimer = setInterval(() => this.sweepPorts(Date.now()), PORT_SILENT_MS / 2);
      this.sweepTimer.unref();
    }
    return port2;
  }

  /** Open measurement ports (tests: restarts must not accumulate them). */
  get measurementPortCount(): number {
    return this.ports.size;
  }

  /** Close ports silent for PORT_SILENT_MS (exposed for tests with an explicit clock). */
  sweepPorts(now: number): void {
    for (const [p, at] of this.ports) {
      if (now - at < PORT_SILENT_MS) continue;
      this.ports.delete(p);
      p.close();
    }
  }

  /** A reload's log.level: the running thread's loggers now, a restarted thread's from its start. */
  setLogLevel(level: LogLevel): void {
    this.data = { ...this.data, logLevel: level };
    this.worker?.postMessage(logLevelMessage(level));
  }

  /** The landing tracker's signatures for the Geyser stream (upstream.grpc); a restarted thread gets the last set. */
  watchSignatures(signatures: readonly string[]): void {
    this.lastWatch = { type: 'geyser-watch', signatures };
    this.worker?.postMessage(this.lastWatch);
  }

  private lastWatch: GeyserWatch | null = null;

  /** Tests only: make the thread throw (requires allowTestCrash). */
  crashForTest(): void {
    this.worker?.postMessage({ type: 'crash' });
  }

  get running(): boolean {
    return this.worker !== null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    for (const p of this.ports.keys()) p.close();
    this.ports.clear();
    await this.supervisor.stop(); // no grace in its row: terminated at once
  }
}

/** The worker side (workers/telemetry-worker.ts). */
export function runTelemetryWorker(data: TelemetryWorkerData, port: MessagePort, makeShare: RegionShareFactory | null): void {
  const log = createLogger(data.logLevel as Parameters<typeof createLogger>[0], 'telemetry');
  // The probe's handshakes go to the QUIC thread through main when the route plan says so (probe-relay.ts).
  const probes = data.probeVia === 'parent' ? new ProbeClient((m) => port.postMessage(m)) : null;
  const follower = new TelemetryFollower(data, log, (s) => port.postMessage(s), probes?.probe, makeShare);
  port.on('message', (m: unknown) => {
    if (isLogLevelMessage(m)) {
      log.level = m.level;
      return;
    }
    if (probes !== null && isProbeAnswer(m)) {
      probes.accept(m);
      return;
    }
    if (data.allowTestCrash && typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'crash') {
      setImmediate(() => {
        throw new Error('telemetry test crash');
      });
      return;
    }
    follower.onMessage(m);
  });
  follower.start();
}
