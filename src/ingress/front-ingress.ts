// The QUIC ingress's front-thread half (HOT: one message per finished stream). It drains the quic-egress thread's request
// ring (woken with Atomics.waitAsync, never blocking the front's event loop) and runs each stream through the same
// code as POST /v1/submit: the key's entry and submission budget (src/admission/submit-budget.ts: one budget whatever
// the transport), its routes and maxRetries (src/admission/send-options.ts), Intake.submitBytes (sanitize, optional
// signature verification, routes available, the egress ring, the landing receipt). Answers go back through the reply ring: a MessagePack map for a bidi stream (the fields and
// codes of /v1/submit), a verdict code for a uni stream, a key id for an authentication question. The stream bytes are
// copied once more than over HTTP: QUIC thread -> ingress ring, then ingress ring -> egress ring (docs/quic-ingress.md).
// A request is taken only while the reply ring has room for its answer, so no answer is ever dropped.
import { C1, Packr, Unpackr } from 'msgpackr';
import { Errors, Failure, failureOf, type ErrorSpec } from '../errors/registry.js';
import type { KeyEntry, KeyTable } from '../admission/key-table.js';
import type { Intake, SubmissionMeta } from '../admission/intake.js';
import { defaultRoutes, maxRetriesFrom, resolveRoutes, routeNames, withAddedRoutes } from '../admission/send-options.js';
import { newLatencyHistogram } from '../metrics/front-metrics.js';
import type { TextBuilder } from '../metrics/prometheus.js';
import type { Logger } from '../log/logger.js';
import { MSG_KINDS, ingressHeaderOf, publishIngress, pushIngress, type IngressHeader } from '../shm/ingress-layout.js';
import { MessageRingConsumer, MessageRingProducer, requestMessageRingStop } from '../shm/message-ring.js';
import type { KeyUsage } from '../admission/key-usage.js';
import type { ReceiptSink } from '../admission/receipt-sink.js';
import { rateLimitedRefusal, takeSubmitToken } from '../admission/submit-budget.js';
import { encodeSignatureBase58 } from '../tx/index.js';
import { LOCAL_NOTE_BLOCKHASH_AT, LOCAL_NOTE_DISPATCHED_AT } from './local-admission.js';
import { STREAM_CODE } from './codes.js';
import { parseAuthRequest } from './start-quic-ingress.js';

export interface FrontIngressDeps {
  readonly keys: KeyTable;
  readonly intake: Intake;
  readonly availableRouteMask: number;
  readonly addedRouteMasks: Uint32Array;
  readonly log: Logger;
  /** Per-key counts on /metrics (src/admission/key-usage.ts); absent = not counted. */
  readonly keyUsage?: KeyUsage;
  /** Landing receipts: the front's half of the receipts of streams admitted in the quic-egress thread. */
  readonly receipts?: ReceiptSink | null;
}

/** Messages handled per turn before yielding to uWS (HTTP keeps being served under a QUIC burst). */
const MESSAGES_PER_TURN = 256;
const IDLE_WAIT_MS = 1_000;

const NOT_MSGPACK = Object.freeze(new Failure(Errors.PARSE_ERROR, 'Parse error: the stream is not one MessagePack map'));
const NOT_A_MAP = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: the request must be a MessagePack map with a `transaction` bin'));
const TRANSACTION_NOT_BIN = Object.freeze(new Failure(Errors.INVALID_PARAMS, 'Invalid params: `transaction` must be bin (the wire transaction bytes)'));
const EMPTY_TRANSACTION = Object.freeze(
  new Failure(Errors.TX_UNDECODABLE, 'failed to deserialize solana_transaction::versioned::VersionedTransaction: empty transaction'),
);
const UNAUTHORIZED = failureOf(Errors.UNAUTHORIZED);
const RATE_LIMITED = failureOf(Errors.RATE_LIMITED);

/** Nesting walked for 0xC1 (the request's own members are at depth 1-2; a request is at most ~4.6 KB). */
const C1_WALK_DEPTH = 64;

/**
 * msgpackr decodes the byte 0xC1, which MessagePack never uses, to a marker object instead of failing (found by the
 * live fuzzer: a lone 0xC1 was answered invalid_params). A request holding one is not MessagePack: parse_error.
 */
function holdsNeverUsed(v: unknown, depth: number): boolean {
  if (v === C1) return true;
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array || depth === C1_WALK_DEPTH) return false;
  if (Array.isArray(v)) return v.some((x) => holdsNeverUsed(x, depth + 1));
  for (const k in v) if (holdsNeverUsed((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/** A uni stream's refusal code for a registry error (docs/quic-ingress.md). */
function uniCode(spec: ErrorSpec): number {
  if (spec === Errors.RATE_LIMITED) return STREAM_CODE.rateLimited;
  if (spec === Errors.OVERLOADED || spec === Errors.SHUTTING_DOWN || spec === Errors.ROUTES_UNAVAILABLE) return STREAM_CODE.overloaded;
  if (spec === Errors.UNAUTHORIZED) return STREAM_CODE.unauthorized;
  return STREAM_CODE.refused;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export class FrontIngress {
  private readonly requests: MessageRingConsumer;
  /** The requests ring's header in the ingress's words. */
  private readonly header: IngressHeader;
  private readonly replies: MessageRingProducer;
  // Plain maps both ways (no msgpackr records extension), so any MessagePack library reads and writes them.
  private readonly packr = new Packr({ useRecords: false });
  private readonly unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
  private stopped = false;
  private loop: Promise<void> | null = null;
  /** Stream FIN read on the quic-egress thread -> published into the egress ring (accepted transactions), microseconds. */
  readonly finToRing = newLatencyHistogram();
  /** Refusals decided here, by registry reason (the quic-egress thread counts its own stream outcomes). */
  private readonly refusals = new Map<string, number>();
  private authRefused = 0;
  /** Decode buffer of bidi requests (see parse()). */
  private readonly scratch: Buffer;

  constructor(
    private readonly deps: FrontIngressDeps,
    channels: { readonly requests: SharedArrayBuffer; readonly replies: SharedArrayBuffer },
  ) {
    this.requests = new MessageRingConsumer(channels.requests);
    this.header = ingressHeaderOf(this.requests.header);
    this.replies = new MessageRingProducer(channels.replies);
    this.scratch = Buffer.allocUnsafeSlow(this.requests.maxPayload);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stop taking streams (the quic-egress thread is told separately: src/ingress/ingress-task-runner.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    requestMessageRingStop(this.requests.sab); // wakes the loop's wait at once
    await this.loop;
  }

  private async run(): Promise<void> {
    const ring = this.requests;
    while (!this.stopped && !ring.stopRequested()) {
      let n = 0;
      // Take a request only when its answer has a slot (every request gets at most one answer).
      while (n < MESSAGES_PER_TURN && this.replies.free() > 0 && ring.take()) {
        try {
          this.handle();
        } catch (err) {
          this.deps.log.error({ event: 'quic_ingress_error', err: String(err) }, 'QUIC ingress: a stream could not be handled');
        }
        ring.release();
        n++;
      }
      if (n === MESSAGES_PER_TURN || (ring.available() > 0 && this.replies.free() === 0)) await new Promise<void>((resolve) => setImmediate(resolve));
      else await ring.waitForMessages(IDLE_WAIT_MS);
    }
  }

  private handle(): void {
    const h = this.header;
    if (h.kind === MSG_KINDS.uniStream) return this.uni(h.keyId, h.connId, h.streamId, h.timeMs);
    if (h.kind === MSG_KINDS.bidiStream) return this.bidi(h.keyId, h.connId, h.streamId, h.timeMs);
    if (h.kind === MSG_KINDS.authRequest) return this.authenticate(h.connId, h.aux);
    if (h.kind === MSG_KINDS.localAccepted) return this.localAccepted(h.keyId, h.connId, h.streamId, h.timeMs, h.code, h.aux);
  }

  /**
   * A stream the quic-egress thread admitted and sent itself (src/ingress/local-admission.ts): what the front does for an
   * accepted stream besides the ring: the key's counts, the receipt's front half (its number reserved there), the
   * FIN -> send latency. No answer: the quic-egress thread answered already.
   */
  private localAccepted(keyId: number, connId: number, streamId: number, finAtMs: number, seq: number, mask: number): void {
    const key = this.deps.keys.entries[keyId];
    if (key !== undefined) key.usage.requests++;
    this.deps.keyUsage?.accepted(keyId);
    const payload = this.requests.payload();
    const r = this.deps.receipts;
    if (seq !== 0 && r !== null && r !== undefined && r.acceptReserved !== undefined) {
      const t = { keyId, routeMask: mask, receivedAtMs: finAtMs, traceId: `quic-${connId}-${streamId}` };
      r.acceptReserved(seq, encodeSignatureBase58(payload, 0), t, mask, payload, LOCAL_NOTE_BLOCKHASH_AT);
    }
    const sentAt = payload.readDoubleLE(LOCAL_NOTE_DISPATCHED_AT);
    this.finToRing.recordValue(Math.max(1, Math.round((sentAt - finAtMs) * 1000)));
  }

  /** The key of an authenticated connection as it is now (a plan change replaces the entry; a revoked one is gone). */
  private keyFor(keyId: number): KeyEntry | undefined {
    const e = this.deps.keys.entries[keyId];
    return e === undefined || e.revoked || this.deps.keys.current(e.hash) !== e ? undefined : e;
  }

  private meta(key: KeyEntry, mask: number, maxRetries: number, finAtMs: number, connId: number, streamId: number): SubmissionMeta {
    return { keyId: key.id, routeMask: mask, maxRetries, receivedAtMs: finAtMs, traceId: `quic-${connId}-${streamId}`, verifySignatures: key.config.verifySignatures };
  }

  private refused(f: Failure, key: KeyEntry | undefined): void {
    this.refusals.set(f.spec.reason, (this.refusals.get(f.spec.reason) ?? 0) + 1);
    if (key === undefined) return;
    key.usage.refused++;
    if (f.spec === Errors.RATE_LIMITED) key.usage.rateLimited++;
  }

  /** One wire transaction, fire-and-forget, on the key's default routes. */
  private uni(keyId: number, connId: number, streamId: number, finAtMs: number): void {
    const key = this.keyFor(keyId);
    let out: string | Failure;
    if (key !== undefined) key.usage.requests++;
    if (key === undefined) out = UNAUTHORIZED;
    else if (takeSubmitToken(key, nowMs(), this.deps.keyUsage) !== 0) out = RATE_LIMITED; // a uni stream answers a code only
    else {
      const mask = defaultRoutes(key, this.deps.availableRouteMask);
      out = typeof mask !== 'number' ? mask : this.deps.intake.submitBytes(this.requests.payload(), this.meta(key, mask, -1, finAtMs, connId, streamId));
    }
    let code = 0;
    if (typeof out === 'string') this.finToRing.recordValue(Math.max(1, Math.round((nowMs() - finAtMs) * 1000)));
    else {
      this.refused(out, key);
      code = uniCode(out.spec);
    }
    const r = this.replies;
    r.reserve();
    publishIngress(r, MSG_KINDS.uniVerdict, 0, keyId, connId, streamId, 0, code, 0);
  }

  /** One MessagePack request {transaction: bin, routes?, maxRetries?}, answered like POST /v1/submit. */
  private bidi(keyId: number, connId: number, streamId: number, finAtMs: number): void {
    const key = this.keyFor(keyId);
    let out: string | Failure;
    let mask = 0;
    if (key !== undefined) key.usage.requests++;
    if (key === undefined) out = UNAUTHORIZED;
    else {
      const waitMs = takeSubmitToken(key, nowMs(), this.deps.keyUsage);
      if (waitMs !== 0) out = rateLimitedRefusal(waitMs);
      else {
        const m = this.parse(key);
        if (m instanceof Failure) out = m;
        else {
          mask = m.mask;
          out = this.deps.intake.submitBytes(m.transaction, this.meta(key, mask, m.maxRetries, finAtMs, connId, streamId));
        }
      }
    }
    let answer: Buffer;
    let code = 0;
    if (typeof out === 'string') {
      this.finToRing.recordValue(Math.max(1, Math.round((nowMs() - finAtMs) * 1000)));
      answer = this.packr.pack({ accepted: true, signature: out, routes: routeNames(withAddedRoutes(mask, keyId, this.deps.addedRouteMasks) & ~this.deps.intake.shedMask) });
    } else {
      this.refused(out, key);
      code = out.spec.id;
      const error: Record<string, unknown> = { code: out.spec.rpcCode, reason: out.spec.reason, message: out.message };
      if (out.data !== undefined && out.data !== null) error.data = out.data;
      answer = this.packr.pack({ accepted: false, error });
    }
    pushIngress(this.replies, MSG_KINDS.bidiReply, answer, keyId, connId, streamId, 0, code, 0);
  }

  private parse(key: KeyEntry): { transaction: Uint8Array; mask: number; maxRetries: number } | Failure {
    // msgpackr refuses a Buffer over a SharedArrayBuffer: the request is decoded from a private copy (bidi only).
    const n = this.requests.payloadLength;
    this.requests.bytes.copy(this.scratch, 0, this.requests.payloadOffset, this.requests.payloadOffset + n);
    const payload = this.scratch.subarray(0, n);
    let doc: unknown;
    try {
      // One value and nothing after it: msgpackr's unpack throws on trailing bytes.
      doc = payload.length === 0 ? undefined : this.unpackr.unpack(payload);
    } catch {
      return NOT_MSGPACK;
    }
    if (doc === undefined || holdsNeverUsed(doc, 0)) return NOT_MSGPACK;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || doc instanceof Map || doc instanceof Uint8Array) return NOT_A_MAP;
    const o = doc as Record<string, unknown>;
    const tx = o.transaction;
    if (!(tx instanceof Uint8Array)) return TRANSACTION_NOT_BIN;
    if (tx.length === 0) return EMPTY_TRANSACTION;
    const mask = resolveRoutes(o.routes, key, this.deps.availableRouteMask);
    if (typeof mask !== 'number') return mask;
    const maxRetries = maxRetriesFrom(o.maxRetries);
    if (typeof maxRetries !== 'number') return maxRetries;
    return { transaction: tx, mask, maxRetries };
  }

  /** Who a client certificate belongs to: its CN as an API key, else its Ed25519 key in a key's quicIdentities. */
  private authenticate(connId: number, _alpn: number): void {
    const { commonName, identity } = parseAuthRequest(this.requests.payload());
    const keys = this.deps.keys;
    let entry = commonName === '' ? undefined : keys.lookup(commonName);
    if (entry === undefined && identity !== '') entry = this.byIdentity(identity);
    if (entry === undefined) this.authRefused++;
    const r = this.replies;
    r.reserve();
    publishIngress(r, MSG_KINDS.authResult, 0, entry === undefined ? -1 : entry.id, connId, 0, 0, 0, 0);
  }

  /** Cold (once per connection): the keys in force now, config and engine, revoked ones excluded. */
  private byIdentity(identity: string): KeyEntry | undefined {
    const keys = this.deps.keys;
    for (const e of keys.entries) {
      if (e.revoked || keys.current(e.hash) !== e) continue;
      const ids = e.config.quicIdentities;
      if (ids !== undefined && ids.includes(identity)) return e;
    }
    return undefined;
  }

  /** Refusals of this half by reason, and authentication failures (the quic-egress thread's counters are rendered beside). */
  renderRefusals(tb: TextBuilder): void {
    tb.declare('slotrelay_quic_ingress_refusals_total', 'counter', 'QUIC ingress streams refused by the intake, by error reason');
    for (const [reason, n] of this.refusals) tb.sample('slotrelay_quic_ingress_refusals_total', { reason }, n);
    tb.declare('slotrelay_quic_ingress_auth_unknown_total', 'counter', 'QUIC ingress certificates that matched no API key');
    tb.sample('slotrelay_quic_ingress_auth_unknown_total', {}, this.authRefused);
    tb.summary('slotrelay_quic_ingress_fin_to_ring_seconds', 'QUIC ingress: stream FIN read -> transaction in the egress ring', {}, this.finToRing, 1e-6);
  }
}
