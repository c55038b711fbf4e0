// Configuration of the QUIC ingress (cold: parsed once at start): the relay host's UDP port, its certificate and
// limits (relayHost.quicPort, relayHost.quic), and a key's quicIdentities. Reference: docs/quic-ingress.md and
// docs/configuration.md.
import { z } from 'zod';
import { base58Decode } from '../quic/base58.js';

/** relayHost.quicPort: 0 disables the QUIC ingress; -1 binds an ephemeral port (tests; printed at start). */
export const QUIC_PORT_DISABLED = 0;
export const QUIC_PORT_EPHEMERAL = -1;

const positiveInt = z.number().int().positive();

const quicIngressSchema = z
  .object({
    /** PEM server certificate and key (both or neither; relative to the config file). Neither: a self-signed one made at start. */
    certFile: z.string().min(1).optional(),
    keyFile: z.string().min(1).optional(),
    /** Open connections at most; a handshake beyond it is closed with code 3. */
    maxConnections: positiveInt.max(100_000).default(1_024),
    /** Open connections per API key; one more is closed with code 2. */
    maxConnectionsPerKey: positiveInt.max(10_000).default(8),
    /** Concurrent streams per connection, of each kind (QUIC MAX_STREAMS); Agave gives unstaked peers 128. */
    maxConcurrentStreams: z.number().int().min(1).max(10_000).default(128),
    /** A connection with no packet for this long is closed (QUIC idle timeout; the smaller of both peers' wins). */
    idleTimeoutMs: z.number().int().min(1_000).max(600_000).default(30_000),
    /** A stream whose FIN has not arrived this long after its first byte is refused with code 18 (Agave: 2 s). */
    streamTimeoutMs: z.number().int().min(100).max(60_000).default(2_000),
    /** A bidi answer the client has not taken (flow control) this long after it was ready: RESET_STREAM code 22. */
    replyTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    /**
     * Slots of each queue between the quic-egress thread and the front thread (a power of two). Full: connections are held
     * (their streams left unread, their stream credit with them) for up to holdTimeoutMs, then refused overloaded.
     */
    queueSlots: z
      .number()
      .int()
      .min(8)
      .max(1 << 20)
      .refine((n) => (n & (n - 1)) === 0, 'must be a power of two')
      .default(4_096),
    /**
     * Back-pressure: longest a connection's streams are left unread while the front's queue is full; past it they are
     * refused overloaded (code 21) until the queue has room again (docs/quic-ingress.md "Back-pressure").
     */
    holdTimeoutMs: z.number().int().min(10).max(60_000).default(1_000),
    /**
     * Admit a stream in the quic-egress thread that read it and send it there, without the front, when its key's effective
     * routes are within {direct, static} (docs/quic-ingress.md "Local admission"). Other keys keep the front's path.
     * false: every stream through the front, as before.
     */
    localAdmission: z.boolean().default(true),
  })
  .strict()
  .refine((q) => (q.certFile === undefined) === (q.keyFile === undefined), 'certFile and keyFile go together')
  .default({});

/** Fields the relay host has beyond an HTTP listener's. */
export const relayHostQuicFields = {
  /** UDP port of the QUIC ingress on relayHost.host (docs/quic-ingress.md); 0 disables it, -1 = an ephemeral port. */
  quicPort: z.number().int().min(QUIC_PORT_EPHEMERAL).max(65535).default(4433),
  quic: quicIngressSchema,
};

/** A base58 Ed25519 public key (a Solana identity). */
const identity = z.string().refine((s) => {
  try {
    return /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s) && base58Decode(s).length === 32;
  } catch {
    return false;
  }
}, 'must be a base58 Ed25519 public key (32 bytes)');

/** keys[].quicIdentities: client certificate keys (Solana identities) that authenticate as this key on QUIC. */
export const quicIdentitiesSchema = z.array(identity).max(256).default([]);
