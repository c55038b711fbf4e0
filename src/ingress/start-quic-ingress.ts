// Starts the QUIC ingress inside the quic-egress thread (cold setup; the reply loop below is HOT: one message per answered
// stream). This is the one entry the quic-egress thread's task calls (workers/quic-ingress-thread.ts), kept apart so the same thread
// can later host the egress's QUIC connections too (issue #12 part 1). It wires the listener
// (./ingress-endpoint.ts) to the two message rings of src/shm/ingress-layout.ts: finished streams and authentication
// questions go to the front thread; its answers come back and are applied to the connections.
import { pack } from 'msgpackr';
import { Errors } from '../errors/registry.js';
import { attachIngressCounters, INGRESS_COUNTER, ingressHeaderOf, MSG_KINDS, pushIngress } from '../shm/ingress-layout.js';
import { MessageRingConsumer, MessageRingProducer } from '../shm/message-ring.js';
import { createLogger, type Logger } from '../log/logger.js';
import type { LevelWithSilent } from 'pino';
// The listener (and with it the quiche binding) is imported when it starts: the front thread imports this module for
// ingressPayloadBytes / parseAuthRequest and must not load the binding (only the quic-egress thread does: route-plan.ts).
import type { IngressEndpoint as IngressEndpointType } from './ingress-endpoint.js';
import { BIDI_REQUEST_OVERHEAD_BYTES } from './codes.js';
import { LocalAdmission, type LocalDispatch } from './local-admission.js';
import { loadMallocTrim } from '../native/malloc-trim.js';
import { startIngressMemoryTrim } from './ingress-memory-trim.js';

export interface QuicIngressOptions {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  readonly keyPem: string;
  readonly certPem: string;
  readonly maxConnections: number;
  readonly maxConnectionsPerKey: number;
  readonly maxConcurrentStreams: number;
  readonly maxTransactionBytes: number;
  readonly idleTimeoutMs: number;
  readonly streamTimeoutMs: number;
  readonly replyTimeoutMs: number;
  /** Longest back-pressure hold of a connection while the front's queue is full (relayHost.quic.holdTimeoutMs). */
  readonly holdTimeoutMs: number;
  /** Admit eligible keys' streams in this thread (relayHost.quic.localAdmission; needs channels.budgets and a dispatch). */
  readonly localAdmission?: boolean;
  /** The log level of a QUIC thread of its own (workers/quic-ingress-thread.ts); the relay's QUIC thread lends its log. */
  readonly logLevel?: LevelWithSilent;
}

/** The shared memory the ingress talks through (made by the front side: src/ingress/ingress-task-runner.ts). */
export interface QuicIngressChannels {
  /** QUIC thread -> front: streams and authentication questions. */
  readonly requests: SharedArrayBuffer;
  /** front -> QUIC thread: answers. Its STOP word stops the ingress. */
  readonly replies: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** The per-key budgets and admission policy (src/shm/budget-layout.ts); absent = no local admission. */
  readonly budgets?: SharedArrayBuffer;
  /** Local admission's slab (src/shm/local-slab-layout.ts), made by the front so it outlives this thread. */
  readonly slab?: SharedArrayBuffer;
  /** Admission by delay's board (src/shm/sojourn-layout.ts) and the QUIC ring consumer's row; absent = not read. */
  readonly sojourn?: SharedArrayBuffer;
  readonly sojournWriter?: number;
}

/** What the hosting QUIC thread lends the ingress for local admission (src/egress/consumer/quic-egress-main.ts). */
export interface LocalSendHost {
  /** The consumer loop's dispatch now (null while it does not run). */
  readonly dispatch: () => LocalDispatch | null;
  /** The receipts buffer (absent: receipts off). */
  readonly receipts?: SharedArrayBuffer;
  readonly log: Logger;
}

/** What the quic-egress thread tells the front once the listener is bound (ingress-task-runner.ts). */
export interface IngressListening {
  readonly event: 'listening';
  readonly host: string;
  readonly port: number;
  /** The socket's kernel buffers as granted (bytes as getsockopt says; the ask is ../quic/socket-buffers.ts's). */
  readonly recvBufferBytes: number;
  readonly sendBufferBytes: number;
  /** Why freed native memory is not given back after a burst (./ingress-memory-trim.ts); null = it is. */
  readonly memoryTrimUnavailable: string | null;
}

export interface QuicIngressHandle {
  readonly address: { readonly host: string; readonly port: number };
  readonly listening: IngressListening;
  /** Resolves once the front asked the ingress to stop (replies ring STOP) and every connection is closed. */
  readonly stopped: Promise<void>;
}

/** Messages handled per turn before yielding to the socket (keeps datagram handling responsive under a burst). */
const REPLIES_PER_TURN = 256;
/** Longest sleep of the reply loop without a message (it also re-checks STOP). */
const IDLE_WAIT_MS = 1_000;
/**
 * Slots of the request ring streams leave free (back-pressure holds connections below it): the authentication
 * questions of new connections share the ring (one each; none = the connection closed with code 3). A locally admitted
 * stream's note takes the slot its stream was read for. 1/16 of the ring, 1 to 64.
 */
export function requestRingReserve(slotCount: number): number {
  return Math.max(1, Math.min(64, slotCount >> 4));
}
const decoder = new TextDecoder();

/** The payload capacity both rings need: a bidi request (the transaction plus its map) or an answer. */
export function ingressPayloadBytes(maxTransactionBytes: number): number {
  return maxTransactionBytes + BIDI_REQUEST_OVERHEAD_BYTES;
}

export async function startQuicIngress(o: QuicIngressOptions, ch: QuicIngressChannels, host?: LocalSendHost): Promise<QuicIngressHandle> {
  const requests = new MessageRingProducer(ch.requests);
  const replies = new MessageRingConsumer(ch.replies);
  const replyHeader = ingressHeaderOf(replies.header);
  const counters = attachIngressCounters(ch.counters);
  const maxBidiBytes = ingressPayloadBytes(o.maxTransactionBytes);
  if (requests.maxPayload < maxBidiBytes) throw new Error('quic ingress: request ring slots are smaller than a bidi request');
  const overloaded = Errors.OVERLOADED;
  const reserve = requestRingReserve(requests.slotCount);
  const { IngressEndpoint } = await import('./ingress-endpoint.js');
  const local =
    o.localAdmission === true && ch.budgets !== undefined && ch.slab !== undefined && host !== undefined
      ? new LocalAdmission({ budgets: ch.budgets, slab: ch.slab, receipts: host.receipts, maxTransactionBytes: o.maxTransactionBytes, notes: requests, dispatch: host.dispatch, sojourn: ch.sojourn, sojournWriter: ch.sojournWriter })
      : null;
  // What a previous thread accepted and did not finish sending goes out again first (cold; waits for the consumer loop).
  if (local !== null && host !== undefined) void local.replay(host.log);
  const endpoint: IngressEndpointType = await IngressEndpoint.listen({
    host: o.host,
    port: o.port,
    keyPem: o.keyPem,
    certPem: o.certPem,
    maxConnections: o.maxConnections,
    maxConnectionsPerKey: o.maxConnectionsPerKey,
    maxConcurrentStreams: o.maxConcurrentStreams,
    maxUniBytes: o.maxTransactionBytes,
    maxBidiBytes,
    idleTimeoutMs: o.idleTimeoutMs,
    streamTimeoutMs: o.streamTimeoutMs,
    replyTimeoutMs: o.replyTimeoutMs,
    holdTimeoutMs: o.holdTimeoutMs,
    counters,
    overloadedReply: pack({ accepted: false, error: { code: overloaded.rpcCode, reason: overloaded.reason, message: overloaded.message } }),
    onAuthenticate: (connId, commonName, identity, alpn) =>
      pushIngress(requests, MSG_KINDS.authRequest, Buffer.from(`${commonName}\n${identity ?? ''}`), -1, connId, 0, 0, 0, alpn),
    onStream: (kind, keyId, connId, streamId, bytes, finAtMs) => pushIngress(requests, kind, bytes, keyId, connId, streamId, finAtMs, 0, 0),
    onLocal: local === null ? undefined : (bidi, keyId, connId, streamId, bytes, finAtMs) => local.admit(bidi, keyId, connId, streamId, bytes, finAtMs),
    afterLocal: local === null ? undefined : () => local.sendAdmitted(),
    frontHasRoom: () => requests.free() > reserve,
  });

  // Freed native memory goes back to the kernel once a burst of datagrams has passed (./ingress-memory-trim.ts). The
  // trim's absence is said by the front (the listening message); each trim by this thread's log.
  const mt = loadMallocTrim();
  const log = host?.log ?? createLogger(o.logLevel ?? 'info', 'quic-ingress');
  const mb = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;
  const stopTrim =
    mt.trim === null
      ? () => undefined
      : startIngressMemoryTrim(mt.trim, () => counters[INGRESS_COUNTER.datagramsReceived], (e) =>
          log.info(
            { event: 'quic_ingress_memory_trimmed', datagrams: e.datagrams, rssBeforeMb: mb(e.rssBeforeBytes), rssAfterMb: mb(e.rssAfterBytes), gcMs: Math.round(e.gcMs), trimMs: Math.round(e.trimMs) },
            'QUIC ingress: native memory freed by a burst given back to the system',
          ),
        );

  const stopped = (async (): Promise<void> => {
    for (;;) {
      let n = 0;
      while (n < REPLIES_PER_TURN && replies.take()) {
        const h = replyHeader;
        if (h.kind === MSG_KINDS.bidiReply) endpoint.reply(h.connId, h.streamId, replies.payload(), h.code);
        else if (h.kind === MSG_KINDS.uniVerdict) endpoint.verdict(h.connId, h.streamId, h.code);
        else if (h.kind === MSG_KINDS.authResult) endpoint.authResult(h.connId, h.keyId);
        replies.release();
        n++;
      }
      // The front took streams (these are its answers): held connections may read again. Then the answers go out now
      // rather than at the end of this turn (setImmediate): one event-loop phase less each.
      if (n > 0) {
        endpoint.resumeHeld();
        endpoint.flushNow();
      }
      if (replies.stopRequested()) break;
      if (n === REPLIES_PER_TURN) await new Promise<void>((resolve) => setImmediate(resolve));
      else await replies.waitForMessages(IDLE_WAIT_MS);
    }
    await endpoint.close();
    // However the ingress ends (a failed one is started again in the same thread: its checks must not stay behind).
  })().finally(stopTrim);
  const address = endpoint.address();
  const buffers = endpoint.socketBuffers();
  const memoryTrim = mt.trim === null ? mt.reason : null;
  return { address, listening: { event: 'listening', ...address, recvBufferBytes: buffers.recv, sendBufferBytes: buffers.send, memoryTrimUnavailable: memoryTrim }, stopped };
}

/** For logs: the payload of an authRequest message, split (front side). */
export function parseAuthRequest(payload: Uint8Array): { commonName: string; identity: string } {
  const text = decoder.decode(payload);
  const nl = text.indexOf('\n');
  return nl < 0 ? { commonName: text, identity: '' } : { commonName: text.slice(0, nl), identity: text.slice(nl + 1) };
}
