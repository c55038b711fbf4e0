// The QUIC ingress as main.ts sees it (front thread, cold): reads relayHost.quicPort / relayHost.quic, loads or makes
// the server certificate, starts the ingress task (./ingress-task-runner.ts: in the quic-egress thread, or a quic-ingress thread of its own) and the front half (./front-ingress.ts),
// renders their metrics and stops both. null when relayHost.quicPort is 0 or the relay host is disabled.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { QUIC_PORT_DISABLED, QUIC_PORT_EPHEMERAL } from '../config/quic-ingress-schema.js';
import type { KeyTable } from '../admission/key-table.js';
import type { Intake } from '../admission/intake.js';
import type { Logger } from '../log/logger.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import { createRandomIdentityCertificate } from '../quic/identity-certificate.js';
import { ListenFailure } from '../native/listen-failure.js';
import { messageRingDepth } from '../shm/message-ring.js';
import { FrontIngress } from './front-ingress.js';
import { IngressMetrics } from './ingress-metrics.js';
import { IngressTaskRunner, type QuicTaskHost } from './ingress-task-runner.js';
import type { KeyUsage } from '../admission/key-usage.js';
import type { ReceiptSink } from '../admission/receipt-sink.js';
import type { BudgetTable } from '../shm/budget-layout.js';
import { LocalPolicy } from './local-policy.js';
import type { IngressListening } from './start-quic-ingress.js';
import { SERVER_SOCKET_BUFFER_BYTES } from '../quic/socket-buffers.js';

export interface QuicIngressServiceDeps {
  readonly config: Readonly<Config>;
  /** The config file (certFile/keyFile are relative to it). */
  readonly configFile: string;
  readonly keys: KeyTable;
  readonly intake: Intake;
  readonly availableRouteMask: number;
  readonly addedRouteMasks: Uint32Array;
  readonly log: Logger;
  /** Per-key counts on /metrics (src/admission/key-usage.ts); absent = not counted. */
  readonly keyUsage?: KeyUsage;
  /** Runs the listener in the relay's quic-egress thread (EgressPool.hostInQuicThread); absent = a quic-ingress thread of its own. */
  readonly host?: QuicTaskHost;
  /** Landing receipts: locally admitted streams' receipts are filed here (front-ingress.ts). */
  readonly receipts?: ReceiptSink | null;
  /** Local admission (relayHost.quic.localAdmission): the key table's budget buffer and the quic-egress thread's route bits. */
  /** sojourn/sojournWriter: admission by delay's board and the QUIC ring consumer's row (local admission defers to the front while over). */
  readonly local?: { readonly budgets: BudgetTable; readonly quicMask: number; readonly sojourn?: SharedArrayBuffer; readonly sojournWriter?: number };
}

export class QuicIngressService {
  private constructor(
    readonly address: { readonly host: string; readonly port: number },
    private readonly thread: IngressTaskRunner,
    private readonly front: FrontIngress,
    readonly metrics: IngressMetrics,
    private readonly policy: LocalPolicy | null,
  ) {}

  static async start(d: QuicIngressServiceDeps): Promise<QuicIngressService | null> {
    const rh = d.config.relayHost;
    if (!rh.enabled || rh.quicPort === QUIC_PORT_DISABLED) return null;
    const q = rh.quic;
    let keyPem: string;
    let certPem: string;
    if (q.certFile !== undefined && q.keyFile !== undefined) {
      const at = (f: string): string => (isAbsolute(f) ? f : resolve(dirname(d.configFile), f));
      certPem = readFileSync(at(q.certFile), 'utf8');
      keyPem = readFileSync(at(q.keyFile), 'utf8');
    } else {
      // Clients do not verify the server (as Solana TPU clients do not): a throwaway self-signed Ed25519 certificate.
      const cert = await createRandomIdentityCertificate();
      keyPem = cert.keyPem;
      certPem = cert.certPem;
    }
    const thread = new IngressTaskRunner(
      {
        host: rh.host,
        port: rh.quicPort === QUIC_PORT_EPHEMERAL ? 0 : rh.quicPort,
        keyPem,
        certPem,
        maxConnections: q.maxConnections,
        maxConnectionsPerKey: q.maxConnectionsPerKey,
        maxConcurrentStreams: q.maxConcurrentStreams,
        maxTransactionBytes: d.config.transactions.maxTransactionBytes,
        idleTimeoutMs: q.idleTimeoutMs,
        streamTimeoutMs: q.streamTimeoutMs,
        replyTimeoutMs: q.replyTimeoutMs,
        holdTimeoutMs: q.holdTimeoutMs,
        localAdmission: q.localAdmission && d.local !== undefined && d.host !== undefined,
        logLevel: d.config.log.level,
      },
      q.queueSlots,
      d.log,
      undefined,
      d.host ?? null,
      d.local?.budgets.sab ?? null,
      d.local?.sojourn !== undefined && d.local.sojournWriter !== undefined ? { sab: d.local.sojourn, writer: d.local.sojournWriter } : null,
    );
    const policy =
      thread.channels.budgets !== undefined && d.local !== undefined
        ? new LocalPolicy({ keys: d.keys, intake: d.intake, budgets: d.local.budgets, availableRouteMask: d.availableRouteMask, addedRouteMasks: d.addedRouteMasks, quicMask: d.local.quicMask })
        : null;
    policy?.start();
    const front = new FrontIngress(d, thread.channels);
    front.start();
    let listening: IngressListening;
    try {
      listening = await thread.start();
    } catch (err) {
      policy?.stop();
      await front.stop();
      await thread.stop();
      // A listener that cannot be opened is a start failure like any other (src/native/listen-failure.ts).
      const port = Math.max(0, rh.quicPort);
      throw new ListenFailure({ kind: 'quic', field: 'relayHost.quicPort', proto: 'udp', host: rh.host, port }, (err as Error).message);
    }
    const requests = thread.channels.requests;
    const metrics = new IngressMetrics(thread.channels.counters, front, () => messageRingDepth(requests), () => thread.restartCount);
    const address = { host: listening.host, port: listening.port };
    const buffers = { recvBufferBytes: listening.recvBufferBytes, sendBufferBytes: listening.sendBufferBytes };
    d.log.info({ event: 'quic_ingress_listening', ...address, ...buffers }, 'QUIC ingress listening');
    if (listening.memoryTrimUnavailable !== null) {
      // docs/quic-ingress.md "Memory after abuse": the relay runs, but a burst's native memory stays with the process.
      d.log.warn({ event: 'quic_ingress_memory_trim_unavailable', why: listening.memoryTrimUnavailable }, 'QUIC ingress: native memory freed after a burst of abuse is not given back to the system');
    }
    // Linux grants twice the ask (its bookkeeping) unless net.core.rmem_max caps it: then bursts drop at the socket.
    if (listening.recvBufferBytes < 2 * SERVER_SOCKET_BUFFER_BYTES) {
      d.log.warn(
        { event: 'quic_socket_buffer_capped', asked: SERVER_SOCKET_BUFFER_BYTES, ...buffers },
        'QUIC ingress: the kernel capped the socket receive buffer below the ask (net.core.rmem_max); raise it (deploy/sysctl/60-slotrelay.conf, slotrelay doctor)',
      );
    }
    return new QuicIngressService(address, thread, front, metrics, policy);
  }

  render(tb: TextBuilder): void {
    this.metrics.render(tb);
  }

  /** Open authenticated connections, the quic-egress thread -> front queue depth, connections held now (the status page). */
  live(): { readonly connections: number; readonly queueDepth: number; readonly held: number } {
    return this.metrics.live();
  }

  /** Closes every QUIC connection (code 4), then stops taking streams. */
  async stop(): Promise<void> {
    this.policy?.stop(); // nothing admitted in the quic-egress thread from now on
    await this.thread.stop();
    await this.front.stop();
  }
}
