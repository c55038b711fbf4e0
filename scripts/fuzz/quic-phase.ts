// The live fuzzer's QUIC ingress phase (harness process; cold set-up, warm loop), run against the same relay after
// the HTTP cases, judged against docs/quic-ingress.md:
// - sessions: one connection of the project's client (IngressClient, a certificate whose CN is the fuzz key), a
//   seeded mix of good and refused streams (quic-streams.ts), or one refusal repeated 3-4x maxConcurrentStreams
//   (stream-credit exhaustion), or uni streams left without FIN (the documented close with code 5); each stream's
//   result and the session's per-outcome counts are checked, then a valid submit on the same connection must be
//   answered within FAST_MS (credit returned), or, after code 5, on a new connection;
// - junk bursts and Initial floods (quic-junk.ts, quic-wire.ts): raw UDP datagrams; every answer is checked (Version
//   Negotiation and Retry only where RFC 9000 allows them, Retries when more than 200 tokenless Initials a second
//   arrive, as the doc says), and right after each a well-behaved client must connect and submit within
//   CONNECT_BOUND_MS.
// Every session and burst draws from caseRng(seed, base + index): a run is reproducible from its seed.
import { Keypair } from '@solana/web3.js';
import { IngressClient, type StreamResult } from '../../src/client/quic/ingress-client.js';
import { ALPN_TPU, CONNECTION_CODE } from '../../src/ingress/codes.js';
import { createIdentityCertificate } from '../../src/quic/identity-certificate.js';
import type { QuicCloseInfo } from '../../src/quic/close-info.js';
import { KEYS } from './keys.js';
import { newPhase, notePhase, type PhaseSummary } from './phase-summary.js';
import { judgeStream, pickStreamName, QUIC_LIMITS, streamCase, CREDIT_RETURNING, type StreamCase, type StreamOutcome } from './quic-streams.js';
import { initialFlood, junkBurst, type JunkContext, type JunkStats } from './quic-junk.js';
import { caseRng } from './rng.js';
import type { PoolTx } from './tx-pool.js';

export const QUIC_CLASSES = ['expected', 'unexpectedStream', 'unexpectedClose', 'stalled', 'counterMismatch', 'unexpectedReply', 'missingAnswer'] as const;
/** caseRng index bases of the phase (HTTP cases use 0..1e8). */
const SESSION_BASE = 1 << 30;
/** A valid submit after a session's refusals: answered within this (the idle timeout a stall waits for is 30 s). */
const FAST_MS = 2_000;
/** Connect + submit right after a junk burst (one lost datagram costs a 1 s PTO). */
const CONNECT_BOUND_MS = 3_000;
/** All of a session's streams opened and settled (a refusal that keeps its credit stalls here). */
const STREAMS_BOUND_MS = 20_000;
/** The close with code 5 once abandoned uni streams hold half the credit past streamTimeoutMs (the relay's timer). */
const ABANDON_BOUND_MS = 3 * QUIC_LIMITS.streamTimeoutMs + 3_000;

export interface QuicPhaseOptions {
  readonly seed: number;
  readonly sessions: number;
  readonly bursts: number;
  readonly maxSeconds: number;
  readonly examples: number;
  readonly port: number;
  readonly metricsUrl: string;
  readonly pool: readonly PoolTx[];
  readonly relayAlive: () => boolean;
  readonly log: (line: string) => void;
}

export interface QuicPhaseResult {
  readonly summary: PhaseSummary;
  /** Transactions answered accepted (bidi), and uni ones counted accepted, for the ring accounting. */
  readonly accepted: number;
}

const OUTCOMES: readonly StreamOutcome[] = ['accepted', 'refused', 'empty', 'too_large', 'unfinished', 'bidi_not_allowed'];

async function streamCounts(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^slotrelay_quic_ingress_streams_total\{outcome="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

async function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let t: NodeJS.Timeout | undefined;
  const r = await Promise.race([p, new Promise<'timeout'>((resolve) => (t = setTimeout(() => resolve('timeout'), ms)))]);
  clearTimeout(t);
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));


type SessionType = 'mixed' | 'exhaustion' | 'abandoned' | 'tpu mixed' | 'tpu exhaustion';

interface Session {
  readonly type: SessionType;
  readonly alpn: string | undefined;
  readonly streams: readonly StreamCase[];
  readonly label: string;
}

function planSession(seed: number, index: number, pool: readonly PoolTx[]): Session {
  const rng = caseRng(seed, SESSION_BASE + index);
  // The first five sessions are one of each type (a short run covers them all), then drawn by weight.
  const types: readonly SessionType[] = ['mixed', 'exhaustion', 'abandoned', 'tpu mixed', 'tpu exhaustion'];
  const drawn = rng.weighted<SessionType>([[6, 'mixed'], [4, 'exhaustion'], [1, 'abandoned'], [2, 'tpu mixed'], [1, 'tpu exhaustion']]);
  const type = index < types.length ? types[index] : drawn;
  const max = QUIC_LIMITS.maxConcurrentStreams;
  const tpu = type.startsWith('tpu');
  const alpn = tpu ? ALPN_TPU : undefined;
  if (type === 'mixed' || type === 'tpu mixed') {
    const n = rng.range(3, 48);
    const streams = Array.from({ length: n }, () => streamCase(rng, pickStreamName(rng, tpu ? 'tpu' : 'bidi'), pool));
    // A few uni streams left open (well under half the credit): they hold their credit, the connection stays.
    if (!tpu && rng.chance(0.2)) for (let i = rng.range(1, 3); i > 0; i--) streams.splice(rng.int(streams.length + 1), 0, streamCase(rng, 'uni abandoned', pool));
    return { type, alpn, streams, label: `${type}: ${n} streams` };
  }
  if (type === 'abandoned') {
    const n = rng.range(max / 2, 2 * max);
    return { type, alpn, streams: Array.from({ length: n }, () => streamCase(rng, 'uni abandoned', pool)), label: `abandoned: ${n} uni streams without FIN` };
  }
  const names = CREDIT_RETURNING.filter((x) => (tpu ? !x.startsWith('bidi') || x === 'bidi on solana-tpu' : x !== 'bidi on solana-tpu'));
  const name = rng.pick(names);
  const n = rng.range(3 * max, 4 * max);
  return { type, alpn, streams: Array.from({ length: n }, () => streamCase(rng, name, pool)), label: `${type}: ${n} x ${name}` };
}

export async function runQuicPhase(o: QuicPhaseOptions): Promise<QuicPhaseResult> {
  const p = newPhase('QUIC ingress', QUIC_CLASSES, ['expected']);
  const cert = await createIdentityCertificate(Keypair.generate().secretKey, KEYS.fuzz.key);
  const started = performance.now();
  const deadline = started + o.maxSeconds * 1000;
  let accepted = 0;
  const connectMs: number[] = [];
  const submitMs: number[] = [];
  const replies: JunkStats = { version_negotiation: 0, retry: 0, vnEligible: 0, retryEligible: 0, datagrams: 0, floodsPastBucket: 0, floods: 0 };
  const connect = (alpn?: string): Promise<IngressClient | QuicCloseInfo> =>
    IngressClient.tryConnect({ host: '127.0.0.1', port: o.port, certificate: cert, alpn, connectTimeoutMs: CONNECT_BOUND_MS });

  /** A fresh connection and one bidi submit, both within CONNECT_BOUND_MS; the problem or null. */
  const goodClient = async (): Promise<string | null> => {
    const t0 = performance.now();
    const c = await connect();
    if (!(c instanceof IngressClient)) return `connect failed: ${JSON.stringify(c)}`;
    try {
      const tx = o.pool.find((t) => t.verdict.accept)!;
      const r = await within(c.request({ transaction: tx.bytes }), Math.max(1, CONNECT_BOUND_MS - (performance.now() - t0)));
      const ms = performance.now() - t0;
      connectMs.push(ms);
      if (r === 'timeout') return `connected, but the submit was not answered within ${CONNECT_BOUND_MS} ms`;
      if (r.kind !== 'answer' || r.answer.accepted !== true) return `submit answered ${JSON.stringify(r)}`;
      accepted++;
      return null;
    } finally {
      c.close();
    }
  };

  for (let i = 0; i < o.sessions && o.relayAlive(); i++) {
    if (performance.now() > deadline) {
      p.truncated = true;
      break;
    }
    const s = planSession(o.seed, i, o.pool);
    p.run++;
    noteItem(s.type, i, s.label, await runSession(s, i));
  }

  for (let b = 0; b < o.bursts && o.relayAlive(); b++) {
    if (performance.now() > deadline) {
      p.truncated = true;
      break;
    }
    p.run++;
    const flood = b % 3 === 2; // every third burst floods tokenless Initials, the others mix every kind of junk
    const ctx: JunkContext = { seed: o.seed, port: o.port, metricsUrl: o.metricsUrl, stats: replies, goodClient, log: o.log };
    noteItem(flood ? 'Initial flood' : 'junk burst', b, '', flood ? await initialFlood(ctx, b) : await junkBurst(ctx, b));
  }

  /** One item, one class: its first problem's (the rest are listed in the example's detail). */
  function noteItem(kind: string, index: number, label: string, problems: readonly (readonly [string, string])[]): void {
    if (problems.length === 0) return notePhase(p, 'expected', kind, index, '', o.examples);
    const more = problems.length > 1 ? `\n(and ${problems.length - 1} more: ${problems.slice(1, 4).map(([c, d]) => `${c}: ${d}`).join('; ')})` : '';
    notePhase(p, problems[0][0], kind, index, `${label === '' ? '' : `${label}: `}${problems[0][1]}${more}`, o.examples);
  }

  const sorted = (a: number[]): number[] => a.slice().sort((x, y) => x - y);
  const c = sorted(connectMs);
  const s = sorted(submitMs);
  Object.assign(p.figures, {
    'junk datagrams': replies.datagrams,
    'version negotiations (of eligible)': `${replies.version_negotiation}/${replies.vnEligible}`,
    'retries (of tokenless full-size v1 Initials sent)': `${replies.retry}/${replies.retryEligible}`,
    'floods the relay read past its bucket': `${replies.floodsPastBucket}/${replies.floods}`,
    'connect+submit after a burst, ms p50/max': c.length === 0 ? '-' : `${c[c.length >> 1].toFixed(0)}/${c[c.length - 1].toFixed(0)}`,
    'submit after a session, ms p50/max': s.length === 0 ? '-' : `${s[s.length >> 1].toFixed(1)}/${s[s.length - 1].toFixed(1)}`,
  });
  p.elapsedMs = Math.round(performance.now() - started);
  return { summary: p, accepted };

  async function runSession(s: Session, index: number): Promise<[string, string][]> {
    const problems: [string, string][] = [];
    const before = await streamCounts(o.metricsUrl);
    const c = await connect(s.alpn);
    if (!(c instanceof IngressClient)) return [['stalled', `connect failed: ${JSON.stringify(c)}`]];
    const expected: Record<string, number> = {};
    try {
      if (s.type === 'abandoned') {
        const opened = s.streams.map((st) => st.open(c));
        const info = await within(c.closed, ABANDON_BOUND_MS);
        if (info === 'timeout') problems.push(['stalled', `not closed within ${ABANDON_BOUND_MS} ms`]);
        else if (!(info.by === 'peer' && info.isApp && info.code === CONNECTION_CODE.streamsAbandoned && info.reason === 'streams_abandoned')) {
          problems.push(['unexpectedClose', `closed ${JSON.stringify(info)}, expected application code 5 streams_abandoned`]);
        }
        await Promise.all(opened);
        // Counted unfinished: at least half the credit before the close (more may have been open).
        const after = await settle(before, (d) => (d.unfinished ?? 0) >= QUIC_LIMITS.maxConcurrentStreams / 2);
        if ((after.unfinished ?? 0) < QUIC_LIMITS.maxConcurrentStreams / 2) problems.push(['counterMismatch', `unfinished +${after.unfinished ?? 0}, expected >= ${QUIC_LIMITS.maxConcurrentStreams / 2}`]);
        const g = await goodClient();
        if (g !== null) problems.push(['stalled', `after the close, a new connection: ${g}`]);
        return problems;
      }
      const results = await within(Promise.all(s.streams.map((st) => st.open(c))), STREAMS_BOUND_MS);
      if (results === 'timeout') return [['stalled', `streams not all opened and settled within ${STREAMS_BOUND_MS} ms (backlog ${c.backlog}): credit not returned`]];
      (results as StreamResult[]).forEach((r, k) => {
        const st = s.streams[k];
        const why = judgeStream(st, r);
        if (why !== null) problems.push([why.startsWith('the connection closed') ? 'unexpectedClose' : 'unexpectedStream', `stream ${k} (${st.name}): ${why}`]);
        else if (st.sends > 0 && r.kind === 'answer') accepted++;
        expected[st.outcome] = (expected[st.outcome] ?? 0) + 1;
      });
      accepted += s.streams.filter((st) => st.sends > 0 && st.expect.kind === 'written').length;
      // The closing submit: credit came back, the connection serves.
      const tx = o.pool.find((t) => t.verdict.accept)!;
      const t1 = performance.now();
      if (s.alpn === ALPN_TPU) {
        const w = await within(c.sendUni(tx.bytes), FAST_MS);
        if (w === 'timeout' || w.kind !== 'written') problems.push(['stalled', `the closing uni submit: ${JSON.stringify(w)}`]);
        else accepted++;
      } else {
        const r = await within(c.request({ transaction: tx.bytes }), FAST_MS);
        if (r === 'timeout') problems.push(['stalled', `the closing submit not answered within ${FAST_MS} ms`]);
        else if (r.kind !== 'answer' || r.answer.accepted !== true || r.answer.signature !== tx.signature) problems.push(['unexpectedStream', `the closing submit: ${JSON.stringify(r)}`]);
        else accepted++;
      }
      submitMs.push(performance.now() - t1);
      expected.accepted = (expected.accepted ?? 0) + 1;
    } finally {
      c.close();
    }
    // Every stream counted once, under its documented outcome (abandoned uni streams: unfinished).
    const match = (d: Record<string, number>): boolean => OUTCOMES.every((k) => (d[k] ?? 0) === (expected[k] ?? 0));
    const after = await settle(before, match);
    if (!match(after)) problems.push(['counterMismatch', `streams_total deltas ${JSON.stringify(after)}, expected ${JSON.stringify(expected)} (session ${index})`]);
    return problems;
  }

  /** Polls the stream counters (the QUIC thread publishes them asynchronously) until `ok` or 3 s; the deltas. */
  async function settle(before: Record<string, number>, ok: (d: Record<string, number>) => boolean): Promise<Record<string, number>> {
    let d: Record<string, number> = {};
    for (let t = 0; t < 60; t++) {
      const now = await streamCounts(o.metricsUrl);
      d = Object.fromEntries(Object.keys(now).map((k) => [k, now[k] - (before[k] ?? 0)]).filter(([, v]) => v !== 0));
      if (ok(d)) return d;
      await sleep(50);
    }
    return d;
  }

}
