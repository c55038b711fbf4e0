// Firedancer's TPU as the localnet models it (localnet process; cold set-up, the UDP handler hot per datagram).
// From Firedancer's own docs and code (firedancer-io/firedancer @ 178b48f):
// - book/api/tpu-quic.md: one transaction per uni stream, "the server does not limit the number of QUIC streams
//   created per connection", no 0-RTT, a stateless Retry by default; ACKs "do not imply acceptance of transaction
//   data"; src/waltz/quic/fd_quic.c sets initial_max_streams_uni = 2^60 and initial_max_data = 2^62-1 for a server.
// - src/app/fdctl/config/default.toml [tiles.quic]: idle_timeout_millis = 10000, retry = true.
// - src/disco/quic/fd_quic_tile.c: the tile publishes downstream "even if there are no credits available" (no
//   back-pressure to the sender); nothing in src/waltz/quic/ or src/disco/quic/ looks up stake.
// - book/api/tpu-udp.md: "Clients send each signed transaction as a separate UDP datagram" on the TPU-UDP port.
// The QUIC side is the shared endpoint (tpu-endpoint.ts) with these settings; TpuUdpListener is the UDP port.
import dgram from 'node:dgram';
import { once } from 'node:events';

/** [tiles.quic] idle_timeout_millis in fdctl's default.toml. */
export const FIREDANCER_IDLE_TIMEOUT_MS = 10_000;

/**
 * Stream credit a Firedancer server grants: fd_quic's 2^60 uni streams. The binding takes a JS number and the
 * endpoint multiplies it by the per-stream window for initial_max_data, so the model grants 2^40 (no sender comes
 * near either; what matters is that credit is never withheld).
 */
export const FIREDANCER_MAX_STREAMS_UNI = 2 ** 40;

export interface TpuUdpCounters {
  readonly datagrams: number;
  readonly transactions: number;
  /** Empty or larger than the maximum transaction: ignored. */
  readonly invalid: number;
}

/** Firedancer's TPU-UDP port: each datagram is one transaction; no answer, ever (book/api/tpu-udp.md). */
export class TpuUdpListener {
  private sock: dgram.Socket | null = null;
  private readonly c = { datagrams: 0, transactions: 0, invalid: 0 };

  constructor(
    private readonly opts: {
      host: string;
      port: number;
      maxTransactionBytes: number;
      /** `tx` is the datagram's own buffer (the callee may keep it). */
      onTransaction: (tx: Uint8Array, arrivalNs: bigint) => void;
    },
  ) {}

  async start(): Promise<void> {
    if (this.sock !== null) return;
    const sock = dgram.createSocket({ type: this.opts.host.includes(':') ? 'udp6' : 'udp4' });
    const max = this.opts.maxTransactionBytes;
    sock.on('message', (msg) => {
      this.c.datagrams++;
      if (msg.length === 0 || msg.length > max) {
        this.c.invalid++;
        return;
      }
      this.c.transactions++;
      this.opts.onTransaction(msg, process.hrtime.bigint());
    });
    sock.bind(this.opts.port, this.opts.host);
    await once(sock, 'listening');
    this.sock = sock;
  }

  address(): { host: string; port: number } {
    if (this.sock === null) throw new Error('TpuUdpListener not started');
    const a = this.sock.address();
    return { host: a.address, port: a.port };
  }

  get counters(): TpuUdpCounters {
    return { ...this.c };
  }

  async stop(): Promise<void> {
    const s = this.sock;
    this.sock = null;
    if (s !== null) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
