// Builds quiche Config objects for the two roles. Cold: once per distinct client option set (kept, see below) / per server endpoint.
import { quiche, type QuicheConfig } from './quiche.js';
import {
  ALPN_SOLANA_TPU,
  MAX_RECV_UDP_PAYLOAD,
  MAX_SEND_UDP_PAYLOAD,
  TLS_SIGALGS,
  type CONGESTION_CONTROLS,
} from './constants.js';

export type CongestionControl = (typeof CONGESTION_CONTROLS)[number];

export interface ClientConfigOptions {
  keyPem: string | null;
  certPem: string | null;
  alpn: readonly string[];
  maxIdleTimeoutMs: number;
  congestionControl: CongestionControl;
}

const encoder = new TextEncoder();

/**
 * Client configs are built once per distinct option set and kept for the life of the process: no BoringSSL context
 * per connection (a handshake to a new leader does not pay for one), and no native Config churn for the GC.
 * Connections copy what they need from the Config.
 */
const clientConfigs = new Map<string, QuicheConfig>();

export function buildClientConfig(o: ClientConfigOptions): QuicheConfig {
  const cacheKey = JSON.stringify([o.keyPem, o.certPem, o.alpn, o.maxIdleTimeoutMs, o.congestionControl]);
  let c = clientConfigs.get(cacheKey);
  if (c === undefined) {
    c = newClientConfig(o);
    clientConfigs.set(cacheKey, c);
  }
  return c;
}

/**
 * Client: presents its identity certificate, does not verify the server (Agave clients do not), offers ALPN
 * solana-tpu. It accepts no streams from the server (TPU servers never open any).
 */
function newClientConfig(o: ClientConfigOptions): QuicheConfig {
  const key = o.keyPem === null ? null : [encoder.encode(o.keyPem)];
  const cert = o.certPem === null ? null : [encoder.encode(o.certPem)];
  const c = quiche.Config.withBoringSslCtx(false, false, null, key, cert, TLS_SIGALGS);
  c.setApplicationProtos([...o.alpn]);
  c.setMaxIdleTimeout(o.maxIdleTimeoutMs);
  c.setMaxSendUdpPayloadSize(MAX_SEND_UDP_PAYLOAD);
  c.setMaxRecvUdpPayloadSize(MAX_RECV_UDP_PAYLOAD);
  c.setInitialMaxData(0);
  c.setInitialMaxStreamDataBidiLocal(0);
  c.setInitialMaxStreamDataBidiRemote(0);
  c.setInitialMaxStreamDataUni(0);
  c.setInitialMaxStreamsBidi(0);
  c.setInitialMaxStreamsUni(0);
  c.setDisableActiveMigration(true);
  c.setCcAlgorithmName(o.congestionControl);
  // quiche's pacing only fills SendInfo.at; we hand datagrams to the kernel at once, so leave it off.
  c.enablePacing(false);
  c.grease(true);
  return c;
}

export interface ServerConfigOptions {
  keyPem: string;
  certPem: string;
  maxIdleTimeoutMs: number;
  maxConcurrentUniStreams: number;
  maxTransactionBytes: number;
  congestionControl: CongestionControl;
}

/**
 * Server: requires a client certificate (verifyPeer => BoringSSL FAIL_IF_NO_PEER_CERT) but accepts any certificate
 * (verifyAllowFail), like Agave's SkipClientVerification; the key is read from it after the handshake. ALPN
 * solana-tpu only, unidirectional streams only.
 */
export function buildServerConfig(o: ServerConfigOptions): QuicheConfig {
  const c = quiche.Config.withBoringSslCtx(
    true,
    true,
    null,
    [encoder.encode(o.keyPem)],
    [encoder.encode(o.certPem)],
    TLS_SIGALGS,
  );
  c.setApplicationProtos([ALPN_SOLANA_TPU]);
  c.setMaxIdleTimeout(o.maxIdleTimeoutMs);
  c.setMaxSendUdpPayloadSize(MAX_SEND_UDP_PAYLOAD);
  c.setMaxRecvUdpPayloadSize(MAX_RECV_UDP_PAYLOAD);
  // Per-stream window: twice the max transaction, so an oversized stream's excess bytes do reach us and we close
  // with Agave's code 5 (invalid_stream) instead of quiche closing with a transport FLOW_CONTROL_ERROR.
  const streamWindow = o.maxTransactionBytes * 2;
  c.setInitialMaxStreamDataUni(streamWindow);
  c.setInitialMaxData(streamWindow * o.maxConcurrentUniStreams);
  c.setInitialMaxStreamDataBidiLocal(0);
  c.setInitialMaxStreamDataBidiRemote(0);
  c.setInitialMaxStreamsBidi(0);
  c.setInitialMaxStreamsUni(o.maxConcurrentUniStreams);
  c.setDisableActiveMigration(true);
  c.setCcAlgorithmName(o.congestionControl);
  c.enablePacing(false);
  return c;
}
