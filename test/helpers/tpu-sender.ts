// Test helper: one QUIC connection to a TPU-like server through the relay's own egress connection worker
// (src/egress/quic/connection-worker.ts: the one bounded queue, stale deadlines, outcomes) with a silent logger and no
// reconnect, so a test can `await sender.send(tx)` / `sendAll(txs)` and read 'sent' once each is with the kernel.
// Tests of the transport itself (back-pressure, window edge) use QuicClientConnection.tryWrite + onWritable instead.
import { ConnectionWorker, type TargetOutcome } from '../../src/egress/quic/connection-worker.js';
import { createLogger } from '../../src/log/logger.js';
import type { IdentityCertificate, QuicClientStats } from '../../src/quic/index.js';

export interface TpuSenderOptions {
  readonly host: string;
  readonly port: number;
  readonly identity: IdentityCertificate;
  /** Default 5,000 ms. */
  readonly connectTimeoutMs?: number;
  /** Default 100,000: a test's burst is never refused as queue_full. */
  readonly maxQueued?: number;
  /** Default 30,000 ms: longer than any test waits. */
  readonly staleAfterMs?: number;
  readonly maxTransactionBytes?: number;
}

const log = createLogger('silent', 'test');

export class TpuSender {
  private constructor(readonly worker: ConnectionWorker) {}

  /** Opens the connection and waits for its handshake; rejects when the first (only) attempt fails. */
  static async connect(o: TpuSenderOptions): Promise<TpuSender> {
    const w = new ConnectionWorker({
      host: o.host,
      port: o.port,
      identity: o.identity,
      maxIdleTimeoutMs: 60_000,
      keepAliveMs: 45_000,
      connectTimeoutMs: o.connectTimeoutMs ?? 5_000,
      reconnect: false,
      retryMinMs: 0,
      retryMaxMs: 0,
      maxQueued: o.maxQueued ?? 100_000,
      staleAfterMs: o.staleAfterMs ?? 30_000,
      maxTransactionBytes: o.maxTransactionBytes,
      log,
    });
    if (!(await w.firstAttempt)) {
      await w.close(0);
      throw new Error(`QUIC connect to ${o.host}:${o.port} failed`);
    }
    return new TpuSender(w);
  }

  /** 'sent' once the transaction's datagram is with the kernel (it may wait in the worker's queue for credit). */
  send(tx: Uint8Array): Promise<TargetOutcome> {
    return Promise.resolve(this.worker.send(tx));
  }

  /** Every transaction given at once (in order); resolves with their outcomes. */
  sendAll(txs: readonly Uint8Array[]): Promise<TargetOutcome[]> {
    return Promise.all(txs.map((tx) => this.send(tx)));
  }

  /** The connection's transport counters (throws once it has ended). */
  stats(): QuicClientStats {
    const s = this.worker.transportStats();
    if (s === null) throw new Error('no connection');
    return s;
  }

  close(): Promise<void> {
    return this.worker.close(0);
  }
}
