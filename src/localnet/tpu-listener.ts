// A validator-like TPU listener for the embedded localnet (localnet thread; hot per transaction). Built on the QUIC
// server endpoint: ALPN solana-tpu, client certificate required (the sender identity), uni streams only, a
// concurrent-stream limit, one transaction per stream on FIN, code 5 on empty/oversized streams. `oneWayDelayMs`
// models the distance to this validator: every datagram is delayed that much in each direction (the endpoint's
// pathDelayMs), so a handshake takes 2 x oneWayDelayMs longer and a transaction arrives oneWayDelayMs later.
// The rest of the network model (docs/localnet.md "Network model"): `lossPct` drops received datagrams at random
// (QUIC recovers them: delay, not loss), `txDropPct` drops whole received transactions at random, `down` answers
// nothing at all (a dead host), and `qos` applies Agave's per-peer limits (src/localnet/tpu-qos.ts). `kind:
// 'firedancer'` makes it Firedancer's TPU instead (tpu-firedancer.ts): a stateless Retry on every new connection,
// unlimited stream credit, a 10 s idle timeout, no QoS (no stake terms at the QUIC layer).
import { MAX_TRANSACTION_BYTES_SIMD_0296, UNSTAKED_MAX_CONCURRENT_UNI_STREAMS, createRandomIdentityCertificate, type IdentityCertificate } from '../quic/index.js';
import { QuicServerEndpoint, type QuicServerPeer } from './tpu-endpoint.js';
import type { ListenerQos } from './tpu-qos-flow-control.js';
import { FIREDANCER_IDLE_TIMEOUT_MS, FIREDANCER_MAX_STREAMS_UNI } from './tpu-firedancer.js';
import type { ValidatorKind } from './validator-kind.js';

export interface TpuTransactionInfo {
  /** The identity of the validator this listener stands for. */
  readonly validatorIdentity: string;
  /** The sender's identity from its client certificate (null if not a single Ed25519 certificate). */
  readonly senderIdentity: string | null;
  /** process.hrtime.bigint() when the stream's FIN was read (after the path delay, like a real arrival). */
  readonly arrivalNs: bigint;
}

export interface TpuListenerOptions {
  host: string;
  /** 0 = ephemeral; see address() after start(). */
  port: number;
  /** Base58 identity of the validator this listener stands for (passed back in every TpuTransactionInfo). */
  validatorIdentity: string;
  /** Concurrent uni streams per connection; default 128 (an unstaked peer). */
  maxStreams?: number;
  /**
   * Largest stream; default 4096 (SIMD-0296: a v1 transaction, several packets on one stream). Longer or empty
   * streams close the connection (code 5). Per-format caps (legacy/v0 1232) are the parser's (wire.ts).
   */
  maxTransactionBytes?: number;
  /** Artificial one-way path delay (ms) applied to every datagram in both directions; default 0. */
  oneWayDelayMs?: number;
  /** Percent of received datagrams dropped at random (0..100); default 0. */
  lossPct?: number;
  /** Percent of received transactions dropped at random before onTransaction (0..100); default 0. */
  txDropPct?: number;
  /** A dead host: every datagram is ignored (no handshake). Default false. */
  down?: boolean;
  /** Agave's QoS: the throttle (tpu-qos.ts) or flow-control (tpu-qos-flow-control.ts) model; default none. */
  qos?: ListenerQos;
  /** Whose TPU this models; default agave. Firedancer ignores maxStreams and qos (see the header). */
  kind?: ValidatorKind;
  /** Firedancer: its idle timeout (ms); default 10,000 ([tiles.quic] idle_timeout_millis). Tests shorten it. */
  idleTimeoutMs?: number;
  /** The server certificate; default a fresh random one (clients do not verify it). */
  certificate?: IdentityCertificate;
  /**
   * With `copy` (default true) `tx` is a copy the callee may keep. With copy: false it is the endpoint's view into a
   * reused buffer, valid only during the call: a callee that keeps only some transactions copies just those (the
   * localnet's TPU gate does, so a transaction is copied once, and a dropped one not at all).
   */
  onTransaction: (tx: Uint8Array, info: TpuTransactionInfo) => void;
  copy?: boolean;
}

export interface TpuListenerCounters {
  readonly connections: number;
  readonly activeConnections: number;
  readonly transactions: number;
  readonly rejectedConnections: number;
  readonly invalidStreams: number;
  readonly unfinishedStreams: number;
  /** Datagrams that reached the listener's socket: processed plus dropped by lossPct or down. */
  readonly datagramsReceived: number;
  /** Stateless Retry packets sent (Firedancer: one per new connection). */
  readonly retriesSent: number;
  /** Datagrams dropped by lossPct or down. */
  readonly datagramsDropped: number;
  /** Transactions received whole and dropped by txDropPct. */
  readonly transactionsDropped: number;
}


export class TpuListener {
  private endpoint: QuicServerEndpoint | null = null;
  private readonly delayMs: number;
  private txDropped = 0;

  constructor(private readonly opts: TpuListenerOptions) {
    this.delayMs = Math.max(0, opts.oneWayDelayMs ?? 0);
  }

  async start(): Promise<void> {
    if (this.endpoint !== null) return;
    const validatorIdentity = this.opts.validatorIdentity;
    const onTransaction = this.opts.onTransaction;
    const copy = this.opts.copy ?? true;
    const dropRate = Math.min(1, Math.max(0, (this.opts.txDropPct ?? 0) / 100));
    const firedancer = this.opts.kind === 'firedancer';
    // Firedancer applies no stake terms at the QUIC layer: no QoS model, whatever the cluster's setting.
    const qos = firedancer ? undefined : this.opts.qos;
    this.endpoint = await QuicServerEndpoint.listen({
      host: this.opts.host,
      port: this.opts.port,
      certificate: this.opts.certificate ?? (await createRandomIdentityCertificate()),
      maxConcurrentUniStreams: firedancer ? FIREDANCER_MAX_STREAMS_UNI : (this.opts.maxStreams ?? UNSTAKED_MAX_CONCURRENT_UNI_STREAMS),
      ...(firedancer ? { statelessRetry: true, maxIdleTimeoutMs: this.opts.idleTimeoutMs ?? FIREDANCER_IDLE_TIMEOUT_MS } : {}),
      maxTransactionBytes: this.opts.maxTransactionBytes ?? MAX_TRANSACTION_BYTES_SIMD_0296,
      pathDelayMs: this.delayMs,
      inboundLossRate: this.opts.down === true ? 1 : (this.opts.lossPct ?? 0) / 100,
      admitConnection: qos === undefined ? undefined : (peer) => qos.admitConnection(peer),
      admitStream: qos === undefined ? undefined : (peer) => qos.admitStream(peer),
      onConnectionClosed: qos === undefined ? undefined : (peer) => qos.connectionClosed(peer),
      onTransaction: (view: Uint8Array, peer: QuicServerPeer) => {
        if (dropRate > 0 && Math.random() < dropRate) {
          this.txDropped++;
          return;
        }
        const arrivalNs = process.hrtime.bigint();
        const info: TpuTransactionInfo = { validatorIdentity, senderIdentity: peer.identity, arrivalNs };
        // The endpoint's view is only valid during this call. new Uint8Array(view) is a real copy (Buffer#slice
        // would alias the reused buffer).
        onTransaction(copy ? new Uint8Array(view) : view, info);
      },
    });
    const endpoint = this.endpoint;
    if (qos !== undefined) qos.evict = (id, code, reason) => void endpoint.closePeer(id, code, reason);
  }

  async stop(): Promise<void> {
    const e = this.endpoint;
    if (e !== null) await e.close();
  }

  /** The bound address (after start()). */
  address(): { host: string; port: number } {
    if (this.endpoint === null) throw new Error('TpuListener not started');
    return this.endpoint.address();
  }

  get counters(): TpuListenerCounters {
    const c = this.endpoint?.counters;
    return {
      connections: c?.connectionsAccepted ?? 0,
      activeConnections: c?.connectionsActive ?? 0,
      transactions: c?.transactions ?? 0,
      rejectedConnections: c?.connectionsRejected ?? 0,
      invalidStreams: c?.invalidStreams ?? 0,
      unfinishedStreams: c?.unfinishedStreams ?? 0,
      datagramsReceived: (c?.datagramsReceived ?? 0) + (c?.datagramsDropped ?? 0),
      retriesSent: c?.retriesSent ?? 0,
      datagramsDropped: c?.datagramsDropped ?? 0,
      transactionsDropped: this.txDropped,
    };
  }
}
