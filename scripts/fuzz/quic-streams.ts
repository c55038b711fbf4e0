// The streams the live fuzzer opens on the QUIC ingress, each with what docs/quic-ingress.md says it must get
// (harness process; generation and judging, warm): the client-visible result (an answer map, a RESET_STREAM or
// STOP_SENDING code, or just "written" for a uni stream, which QUIC gives no verdict) and the outcome it is counted
// under in slotrelay_quic_ingress_streams_total (the only trace a uni refusal leaves, so it is checked per session).
import { Packr } from 'msgpackr';
import type { IngressClient, StreamResult } from '../../src/client/quic/ingress-client.js';
import type { Rng } from './rng.js';
import type { PoolTx } from './tx-pool.js';

/** The fuzz relay's limits (relayConfig in harness.ts sets them; the doc's formulas give the rest). */
export const QUIC_LIMITS = { maxTransactionBytes: 4096, bidiOverhead: 512, maxConcurrentStreams: 32, streamTimeoutMs: 1_000 } as const;

export type StreamOutcome = 'accepted' | 'refused' | 'empty' | 'too_large' | 'unfinished' | 'bidi_not_allowed';

/** What a stream must get. `answer`: a map check returning the problem or null. */
export type StreamExpect =
  | { readonly kind: 'written' }
  | { readonly kind: 'answer'; readonly check: (a: Record<string, unknown>) => string | null }
  /** RESET_STREAM with this code; a STOP_SENDING seen while still writing (code `code`, or -1: quiche drops it) too. */
  | { readonly kind: 'refusedStream'; readonly code: number };

export interface StreamCase {
  readonly name: string;
  readonly open: (c: IngressClient) => Promise<StreamResult>;
  readonly expect: StreamExpect;
  readonly outcome: StreamOutcome;
  /** Ends without FIN or reset: holds its credit past streamTimeoutMs (never stopped: docs/quic-ingress.md). */
  readonly abandoned: boolean;
  /** A transaction the relay must accept (counted for the ring accounting). */
  readonly sends: number;
}

const packr = new Packr({ useRecords: false });
const L = QUIC_LIMITS;

function accepted(signature: string): (a: Record<string, unknown>) => string | null {
  return (a) => {
    if (a.accepted !== true) return `not accepted: ${JSON.stringify(a)}`;
    if (a.signature !== signature) return `signature ${String(a.signature)}, expected ${signature}`;
    if (JSON.stringify(a.routes) !== '["rpc"]') return `routes ${JSON.stringify(a.routes)}, expected ["rpc"]`;
    return Object.keys(a).length === 3 ? null : `extra members: ${Object.keys(a).join(',')}`;
  };
}

/** {accepted: false, error: {code, reason, message, data?}} with the reason and code, the message by a rule. */
function refusal(code: number, reasons: readonly string[], message?: (m: string) => boolean): (a: Record<string, unknown>) => string | null {
  return (a) => {
    const e = a.error as Record<string, unknown> | undefined;
    if (a.accepted !== false || e === undefined || typeof e !== 'object') return `not a refusal: ${JSON.stringify(a)}`;
    if (e.code !== code || !reasons.includes(String(e.reason))) return `error ${String(e.code)} ${String(e.reason)}, expected ${code} ${reasons.join('|')}: ${JSON.stringify(e)}`;
    if (typeof e.message !== 'string' || e.message === '' || (message !== undefined && !message(e.message))) return `message ${JSON.stringify(e.message)}`;
    return null;
  };
}

function acceptedTx(rng: Rng, pool: readonly PoolTx[]): PoolTx {
  return rng.pick(pool.filter((t) => t.verdict.accept));
}

/** Bytes that are not one MessagePack value: a never-used byte, a cut value, or a value with bytes after it. */
function notMsgpack(rng: Rng, tx: PoolTx): Buffer {
  const packed = packr.pack({ transaction: tx.bytes });
  switch (rng.int(4)) {
    case 0:
      return Buffer.concat([Buffer.from([0xc1]), rng.bytes(rng.int(40))]);
    case 1:
      return packed.subarray(0, rng.range(1, packed.length - 1));
    case 2:
      return Buffer.concat([packed, rng.bytes(rng.range(1, 8))]);
    default:
      return Buffer.from([rng.pick([0xdb, 0xdf, 0xdd, 0xc6, 0xc5]), ...rng.bytes(rng.int(4))]);
  }
}

export type StreamFamily = 'uni' | 'bidi' | 'tpu';

const UNI: readonly (readonly [number, string])[] = [
  [4, 'uni valid'], [3, 'uni refused'], [3, 'uni garbage'], [2, 'uni empty'], [3, 'uni too_large'], [2, 'uni too_large, late FIN'], [3, 'uni reset by client'],
];
const BIDI: readonly (readonly [number, string])[] = [
  [4, 'bidi valid'], [2, 'bidi unknown keys'], [2, 'bidi maxRetries'], [2, 'bidi bad maxRetries'], [2, 'bidi unknown route'], [2, 'bidi route not configured'],
  [3, 'bidi not msgpack'], [2, 'bidi empty'], [2, 'bidi not a map'], [2, 'bidi transaction not bin'], [1, 'bidi empty transaction'], [2, 'bidi refused tx'],
  [3, 'bidi too_large'], [2, 'bidi unfinished'], [3, 'bidi reset by client'],
];
/** Refusals whose stream credit must come back (the exhaustion sessions repeat one of these). */
export const CREDIT_RETURNING = ['uni refused', 'uni garbage', 'uni empty', 'uni too_large', 'uni too_large, late FIN', 'uni reset by client', 'bidi not msgpack', 'bidi too_large', 'bidi unfinished', 'bidi reset by client', 'bidi on solana-tpu'] as const;

export function pickStreamName(rng: Rng, family: StreamFamily): string {
  if (family === 'tpu') return rng.chance(0.3) ? 'bidi on solana-tpu' : rng.weighted(UNI);
  return rng.chance(0.45) ? rng.weighted(UNI) : rng.weighted(BIDI);
}

/** The stream `name` with its bytes drawn from `rng`. */
export function streamCase(rng: Rng, name: string, pool: readonly PoolTx[]): StreamCase {
  const tx = acceptedTx(rng, pool);
  const base = { name, abandoned: false, sends: 0 };
  const ask = (req: unknown): ((c: IngressClient) => Promise<StreamResult>) => {
    const bytes = packr.pack(req);
    return (c) => c.requestRaw(bytes);
  };
  const answer = (check: (a: Record<string, unknown>) => string | null): StreamExpect => ({ kind: 'answer', check });
  const invalid = (includes: string): StreamExpect => answer(refusal(-32602, ['invalid_params'], (m) => m.includes(includes)));
  switch (name) {
    case 'uni valid':
      return { ...base, open: (c) => c.sendUni(tx.bytes), expect: { kind: 'written' }, outcome: 'accepted', sends: 1 };
    case 'uni refused': {
      const bad = rng.pick(pool.filter((t) => !t.verdict.accept));
      return { ...base, open: (c) => c.sendUni(bad.bytes), expect: { kind: 'written' }, outcome: 'refused' };
    }
    case 'uni garbage': {
      // A first byte of 0 signatures cannot sanitize; the rest random.
      const b = Buffer.concat([Buffer.from([0]), rng.bytes(rng.range(0, 1200))]);
      return { ...base, open: (c) => c.sendUni(b), expect: { kind: 'written' }, outcome: 'refused' };
    }
    case 'uni empty':
      return { ...base, open: (c) => c.sendUni(new Uint8Array(0)), expect: { kind: 'written' }, outcome: 'empty' };
    case 'uni too_large': {
      const b = rng.bytes(rng.range(L.maxTransactionBytes + 1, 3 * L.maxTransactionBytes));
      return { ...base, open: (c) => c.sendUni(b), expect: { kind: 'written' }, outcome: 'too_large' };
    }
    case 'uni too_large, late FIN': {
      const b = rng.bytes(rng.range(L.maxTransactionBytes + 1, 2 * L.maxTransactionBytes));
      const cut = rng.range(1, b.length - 1);
      const delay = rng.range(5, L.streamTimeoutMs / 4);
      return { ...base, open: (c) => c.sendUniLate(b.subarray(0, cut), b.subarray(cut), delay), expect: { kind: 'written' }, outcome: 'too_large' };
    }
    case 'uni reset by client': {
      const b = rng.bytes(rng.range(1, 600));
      const code = rng.int(1 << 20);
      return { ...base, open: (c) => c.abandon(b, code), expect: { kind: 'written' }, outcome: 'unfinished' };
    }
    case 'uni abandoned': {
      const b = rng.bytes(rng.range(1, 600));
      return { ...base, open: (c) => c.sendUni(b, false), expect: { kind: 'written' }, outcome: 'unfinished', abandoned: true };
    }
    case 'bidi valid': {
      const routes = rng.pick<unknown>([undefined, null, 'default', ['rpc'], ['rpc', 'direct'], ['jito', 'rpc', 'rpc']]);
      const req: Record<string, unknown> = { transaction: tx.bytes };
      if (routes !== undefined) req.routes = routes;
      return { ...base, open: ask(req), expect: answer(accepted(tx.signature)), outcome: 'accepted', sends: 1 };
    }
    case 'bidi unknown keys': {
      const req: Record<string, unknown> = { [rng.pick(['foo', 'Transaction', 'skipPreflight', 'route', ''])]: rng.pick<unknown>([1, 'x', null, [1], { a: 1 }, rng.bytes(5)]), transaction: tx.bytes };
      return { ...base, open: ask(req), expect: answer(accepted(tx.signature)), outcome: 'accepted', sends: 1 };
    }
    case 'bidi maxRetries': {
      const n = rng.pick([0, 1, rng.int(100), 2 ** 31 - 1, 2 ** 31, 2 ** 40]);
      return { ...base, open: ask({ transaction: tx.bytes, maxRetries: n }), expect: answer(accepted(tx.signature)), outcome: 'accepted', sends: 1 };
    }
    case 'bidi bad maxRetries': {
      const v = rng.pick<unknown>([-1, 1.5, 'five', true, [1], -(2 ** 40)]);
      return { ...base, open: ask({ transaction: tx.bytes, maxRetries: v }), expect: invalid('maxRetries'), outcome: 'refused' };
    }
    case 'bidi unknown route': {
      const routes = rng.pick<unknown>([['x'], ['RPC'], 'rpc', 5, [5], [], [['rpc']], 'DEFAULT', ['rpc', 'x']]);
      return { ...base, open: ask({ transaction: tx.bytes, routes }), expect: answer(refusal(-32602, ['unknown_route'], (m) => m.includes('routes'))), outcome: 'refused' };
    }
    case 'bidi route not configured': {
      const routes = rng.pick([['direct'], ['jito'], ['static'], ['direct', 'jito', 'static']]);
      return { ...base, open: ask({ transaction: tx.bytes, routes }), expect: answer(refusal(-32602, ['route_not_configured'], (m) => m.includes('routes'))), outcome: 'refused' };
    }
    case 'bidi not msgpack': {
      const b = notMsgpack(rng, tx);
      return { ...base, open: (c) => c.requestRaw(b), expect: answer(refusal(-32700, ['parse_error'])), outcome: 'refused' };
    }
    case 'bidi empty':
      return { ...base, open: (c) => c.requestRaw(new Uint8Array(0)), expect: answer(refusal(-32700, ['parse_error'])), outcome: 'refused' };
    case 'bidi not a map': {
      const v = rng.pick<unknown>([[tx.bytes], 5, 'x', null, true, tx.bytes, [], 1.5]);
      return { ...base, open: ask(v), expect: invalid('map'), outcome: 'refused' };
    }
    case 'bidi transaction not bin': {
      const v = rng.pick<unknown>([tx.bytes.toString('base64'), 5, null, [1, 2], { a: 1 }, true]);
      const req: Record<string, unknown> = rng.chance(0.2) ? { routes: ['rpc'] } : { transaction: v };
      return { ...base, open: ask(req), expect: invalid('transaction'), outcome: 'refused' };
    }
    case 'bidi empty transaction':
      return { ...base, open: ask({ transaction: new Uint8Array(0) }), expect: answer(refusal(-32602, ['tx_undecodable'])), outcome: 'refused' };
    case 'bidi refused tx': {
      const bad = rng.pick(pool.filter((t) => !t.verdict.accept));
      const message = (bad.verdict as { message: string }).message;
      return { ...base, open: ask({ transaction: bad.bytes }), expect: answer(refusal(-32602, ['tx_undecodable', 'tx_invalid', 'tx_too_large_decoded'], (m) => m === message)), outcome: 'refused' };
    }
    case 'bidi too_large': {
      const b = rng.bytes(rng.range(L.maxTransactionBytes + L.bidiOverhead + 1, 4 * (L.maxTransactionBytes + L.bidiOverhead)));
      return { ...base, open: (c) => c.requestRaw(b), expect: { kind: 'refusedStream', code: 17 }, outcome: 'too_large' };
    }
    case 'bidi unfinished': {
      const b = packr.pack({ transaction: tx.bytes }).subarray(0, rng.range(1, 100));
      return { ...base, open: (c) => c.requestRaw(b, false), expect: { kind: 'refusedStream', code: 18 }, outcome: 'unfinished' };
    }
    case 'bidi reset by client': {
      const b = rng.bytes(rng.range(1, 300));
      const code = rng.int(1 << 20);
      return { ...base, open: (c) => c.abandon(b, code, true), expect: { kind: 'written' }, outcome: 'unfinished' };
    }
    case 'bidi on solana-tpu':
      return { ...base, open: (c) => c.requestRaw(tx.bytes), expect: { kind: 'refusedStream', code: 23 }, outcome: 'bidi_not_allowed' };
    default:
      throw new Error(`unknown stream case ${name}`);
  }
}

/** The problem with a stream's result, or null. */
export function judgeStream(s: StreamCase, r: StreamResult): string | null {
  const e = s.expect;
  if (r.kind === 'closed') return 'the connection closed under the stream';
  switch (e.kind) {
    case 'written':
      return r.kind === 'written' ? null : `expected the stream written, got ${JSON.stringify(r)}`;
    case 'answer':
      return r.kind === 'answer' ? e.check(r.answer) : `expected an answer map, got ${JSON.stringify(r)}`;
    case 'refusedStream':
      if (r.kind === 'reset' && r.code === e.code) return null;
      if (r.kind === 'stopped' && (r.code === e.code || r.code === -1)) return null;
      return `expected RESET_STREAM ${e.code}, got ${JSON.stringify(r)}`;
  }
}
