// Solana TPU-over-QUIC constants shared by the egress client, the localnet TPU listeners and the QUIC ingress.
// Cold: read at setup only. Values follow Agave (streamer/src/nonblocking/quic.rs, tls-utils) as of 2.2-2.3; each
// carries its reason and unit because they move between releases (docs/tpu-quic.md).

/** ALPN every Agave TPU port requires; any other protocol fails the handshake. */
export const ALPN_SOLANA_TPU = 'solana-tpu';

/** Application close codes Agave's TPU uses (streamer/src/nonblocking/quic.rs ConnectionCloseCode). */
export const TPU_CLOSE_CODE = {
  dropped: 1,
  disallowed: 2,
  exceedMaxStreamCount: 3,
  tooMany: 4,
  /** An empty stream or one longer than the max transaction size: closes the WHOLE connection. */
  invalidStream: 5,
} as const;

/** Solana PACKET_DATA_SIZE: the largest wire transaction today (bytes). */
export const PACKET_DATA_SIZE = 1232;
/** The max transaction size once SIMD-0296 activates (bytes). */
export const MAX_TRANSACTION_BYTES_SIMD_0296 = 4096;

/** Agave QUIC_KEEP_ALIVE since 2.2 (ms); older releases used 1 s, Jet 1 s. Capped at half the idle timeout. */
export const KEEP_ALIVE_MS = 45_000;
/** Agave QUIC_MAX_TIMEOUT since 2.2 (ms); the effective value is the smaller of both peers' idle timeouts. */
export const MAX_IDLE_TIMEOUT_MS = 60_000;
/** Agave QUIC_CONNECTION_HANDSHAKE_TIMEOUT (ms): a server drops a connection not established by then. */
export const SERVER_HANDSHAKE_TIMEOUT_MS = 2_000;
/** Agave chunk timeout (ms): a stream whose FIN has not arrived by then is dropped. */
export const STREAM_CHUNK_TIMEOUT_MS = 2_000;
/** Concurrent uni streams Agave grants an unstaked peer (QUIC_MIN_STAKED_CONCURRENT_STREAMS is the same order). */
export const UNSTAKED_MAX_CONCURRENT_UNI_STREAMS = 128;

/** Our source connection ids: 16 bytes (<= quiche MAX_CONN_ID_LEN 20); the first 4 carry the server's slot index. */
export const LOCAL_CID_LEN = 16;
/**
 * RFC 9000 §14.1 / §5.2.2: an Initial (of any version) in a datagram smaller than this is dropped unanswered: no
 * Version Negotiation, no Retry (either would answer an unvalidated address with more bytes than it sent).
 */
export const MIN_INITIAL_DATAGRAM = 1200;
/** Largest UDP payload we send (bytes): quiche's MAX_DATAGRAM_SIZE, below common path MTUs (1500 - IP/UDP). */
export const MAX_SEND_UDP_PAYLOAD = 1350;
/** Largest UDP payload we accept (bytes): quinn may probe up to ~1452 on loopback/ethernet. */
export const MAX_RECV_UDP_PAYLOAD = 1500;

/**
 * TLS 1.3 signature algorithms offered/accepted. Ed25519 must be present: Solana identity certificates are Ed25519,
 * and BoringSSL leaves it out by default. The others let us talk to servers with ordinary certificates.
 */
export const TLS_SIGALGS = [
  'ed25519',
  'ecdsa_secp256r1_sha256',
  'rsa_pss_rsae_sha256',
  'rsa_pkcs1_sha256',
  'ecdsa_secp384r1_sha384',
  'rsa_pss_rsae_sha384',
  'rsa_pkcs1_sha384',
  'rsa_pss_rsae_sha512',
  'rsa_pkcs1_sha512',
].join(':');

/** quiche/TLS transport error code for a failed ALPN negotiation (0x100 + TLS alert 120 no_application_protocol). */
export const TRANSPORT_CODE_NO_APPLICATION_PROTOCOL = 0x178;

/** quiche congestion controllers a connection can use (routes.direct.congestionControl; the schema's enum). */
export const CONGESTION_CONTROLS = Object.freeze(['cubic', 'reno', 'bbr'] as const);
