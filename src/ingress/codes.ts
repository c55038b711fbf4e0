// QUIC ingress application error codes and ALPNs (cold constants; the contract of docs/quic-ingress.md, which lists
// each one: keep them in step). Connection codes go in CONNECTION_CLOSE; stream codes in STOP_SENDING (our receive
// side) and RESET_STREAM (our send side of a bidi stream).

export const ALPN_SLOTRELAY = 'slotrelay/1';
export const ALPN_TPU = 'solana-tpu';
/** Offered in this order; the index travels as the connection's ALPN number. */
export const INGRESS_ALPNS = Object.freeze([ALPN_SLOTRELAY, ALPN_TPU] as const);
export const ALPN_INDEX = Object.freeze({ slotrelay: 0, tpu: 1 } as const);

export const CONNECTION_CODE = Object.freeze({
  /** The certificate maps to no API key (CN not a key, Ed25519 key in no key's quicIdentities), or the key is revoked. */
  unauthorized: 1,
  /** The key already has relayHost.quic.maxConnectionsPerKey connections open. */
  keyConnectionLimit: 2,
  /** The relay has relayHost.quic.maxConnections open, or cannot look the key up now. */
  serverBusy: 3,
  /** The relay is stopping. */
  shuttingDown: 4,
  /**
   * The client left half of relayHost.quic.maxConcurrentStreams uni streams unended past streamTimeoutMs: each was
   * stopped (STOP_SENDING), and the QUIC library keeps a stopped uni stream's credit (docs/quic-ingress.md).
   */
  streamsAbandoned: 5,
} as const);

export const STREAM_CODE = Object.freeze({
  /** A uni stream with FIN and no byte. */
  empty: 16,
  /** Longer than the limit (uni: transactions.maxTransactionBytes; bidi: that + BIDI_REQUEST_OVERHEAD_BYTES). */
  tooLarge: 17,
  /** No FIN within relayHost.quic.streamTimeoutMs. */
  unfinished: 18,
  /** The transaction was refused (undecodable, invalid, signature, route policy): uni streams. */
  refused: 19,
  /** The key's submission budget is spent (the same bucket as HTTP): uni streams. */
  rateLimited: 20,
  /** The relay cannot queue it now (ingress or egress queue full, routes unavailable, stopping): uni streams. */
  overloaded: 21,
  /** The answer of a bidi stream was not taken by the client within relayHost.quic.replyTimeoutMs. */
  replyTimeout: 22,
  /** A bidi stream on ALPN solana-tpu (uni streams only there). */
  bidiNotAllowed: 23,
  /** The key was revoked after the connection was authenticated. */
  unauthorized: 24,
} as const);

/** Room a bidi request may take beyond the transaction: the MessagePack map's keys, routes and maxRetries. */
export const BIDI_REQUEST_OVERHEAD_BYTES = 512;
