// Raw-UDP junk for the live fuzzer's QUIC phase (harness process; cold): bursts of every kind of junk datagram
// (quic-wire.ts) paced so that the relay reads them all, and floods of tokenless full-size Initials past the relay's
// 200/s bucket. Every answer is judged (quic-wire.ts judgeReply); after each, a well-behaved client must connect and
// submit (goodClient, from quic-phase.ts). Each burst draws from caseRng(seed, BURST_BASE + index).
import dgram from 'node:dgram';
import { junkDatagram, judgeReply, MIN_INITIAL_DATAGRAM, v1Initial, type Junk } from './quic-wire.js';
import { caseRng } from './rng.js';

/** caseRng index base of the bursts (HTTP cases use 0..1e8, QUIC sessions 2^30..). */
export const BURST_BASE = (1 << 30) + (1 << 28);
/** Junk is sent 10 datagrams per PACE_MS (measured: the relay reads ~2,000 junk Initials/s; faster, the kernel drops). */
const PACE_MS = 5;
/** docs/quic-ingress.md: a bucket of 200 tokenless Initials, refilled at 200/s; beyond, a Retry. */
const TOKENLESS_BUCKET = 200;
/** A flood goes on at most this long waiting for the relay to read past its bucket. */
const FLOOD_MAX_MS = 4_000;

export interface JunkStats {
  version_negotiation: number;
  retry: number;
  vnEligible: number;
  retryEligible: number;
  datagrams: number;
  /** Floods in which the relay read past its bucket (Retries were due), of all floods. */
  floodsPastBucket: number;
  floods: number;
}

export interface JunkContext {
  readonly seed: number;
  readonly port: number;
  readonly metricsUrl: string;
  readonly stats: JunkStats;
  /** A fresh connection and one submit within the bound: the problem, or null. */
  readonly goodClient: () => Promise<string | null>;
  readonly log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function datagramsReceived(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Number(/^slotrelay_quic_ingress_datagrams_total\{direction="received"\} (\d+)/m.exec(text)?.[1] ?? NaN);
}

/**
 * A flood of tokenless full-size v1 Initials (the junk) for 0.8-1.5 s, longer (at most FLOOD_MAX_MS) until
 * the relay has read 150 more than its bucket allows (its datagram counter tells how many it read; the kernel drops
 * what its QUIC thread cannot take, slower on a loaded box): Retries must come back for those, each well-formed; then
 * a good client connects and submits.
 */
export async function initialFlood(o: JunkContext, b: number): Promise<[string, string][]> {
  const rng = caseRng(o.seed, BURST_BASE + b);
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const sent = new Map<string, Junk>();
  const problems: [string, string][] = [];
  let retry = 0;
  sock.on('message', (msg: Buffer) => {
    const v = judgeReply(msg, sent);
    if (v.problem !== null) problems.push(['unexpectedReply', `flood ${b}: ${v.problem}`]);
    else if (v.kind === 'retry') retry++;
  });
  // ~3,000-5,000 offered a second (the rate) for 0.8-1.5 s: the relay reads well past its bucket.
  const ms = rng.range(800, 1_500);
  const perTick = rng.range(20, 30);
  const before = await datagramsReceived(o.metricsUrl);
  const t0 = performance.now();
  let n = 0;
  let tick = 0;
  const allowedAt = (elapsedMs: number): number => TOKENLESS_BUCKET + (TOKENLESS_BUCKET * elapsedMs) / 1000;
  for (let past = false; ; tick++) {
    const elapsed = performance.now() - t0;
    if (elapsed >= FLOOD_MAX_MS || (elapsed >= ms && past)) break;
    for (let i = 0; i < perTick; i++) {
      const j = v1Initial(rng, (b << 16) | n++);
      sent.set(j.scid, j);
      sock.send(j.bytes, o.port, '127.0.0.1');
    }
    if (tick % 20 === 19) past = (await datagramsReceived(o.metricsUrl)) - before > allowedAt(performance.now() - t0) + 150;
    await sleep(PACE_MS);
  }
  const sendMs = performance.now() - t0;
  await sleep(300);
  const read = (await datagramsReceived(o.metricsUrl)) - before;
  sock.close();
  o.stats.datagrams += n;
  o.stats.retryEligible += n;
  o.stats.retry += retry;
  const allowed = allowedAt(sendMs + 300);
  o.stats.floods++;
  if (read > allowed + 50) o.stats.floodsPastBucket++;
  // Every Initial read past the bucket gets a Retry; half of them reaching us allows for datagrams lost on the way.
  if (read > allowed + 50 && retry < (read - allowed) / 2) {
    problems.push(['missingAnswer', `flood ${b}: the relay read ${read} of ${n} tokenless Initials in ${sendMs.toFixed(0)} ms (the bucket allows ${allowed.toFixed(0)}) and sent ${retry} Retries`]);
  }
  if (retry > read) problems.push(['unexpectedReply', `flood ${b}: ${retry} Retries for ${read} Initials read`]);
  const g = await o.goodClient();
  if (g !== null) problems.push(['stalled', `after flood ${b} (${n} Initials): ${g}`]);
  o.log(`quic flood ${b}: ${n} tokenless Initials in ${sendMs.toFixed(0)} ms, ${read} read by the relay, ${retry} Retry; good client ${g ?? 'ok'}`);
  return problems;
}

export async function junkBurst(o: JunkContext, b: number): Promise<[string, string][]> {
  const rng = caseRng(o.seed, BURST_BASE + b);
  const size = rng.range(20, 400);
  const socks = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const sock = dgram.createSocket('udp4');
      await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
      return sock;
    }),
  );
  const sent = new Map<string, Junk>();
  const problems: [string, string][] = [];
  let vn = 0;
  let retry = 0;
  for (const sock of socks) {
    sock.on('message', (msg: Buffer) => {
      const v = judgeReply(msg, sent);
      if (v.problem !== null) problems.push(['unexpectedReply', `burst ${b}: ${v.problem}`]);
      else if (v.kind === 'retry') retry++;
      else if (v.kind === 'version_negotiation') vn++;
    });
  }
  let vnEligible = 0;
  let retryEligible = 0;
  const t0 = performance.now();
  for (let i = 0; i < size; i++) {
    const j = junkDatagram(rng, (b << 16) | i);
    if (j.scid !== '') sent.set(j.scid, j);
    if (j.allowed.includes('version_negotiation') && j.bytes.length >= MIN_INITIAL_DATAGRAM) vnEligible++;
    if (j.allowed.includes('retry') && j.bytes.length >= MIN_INITIAL_DATAGRAM) retryEligible++;
    socks[i & 3].send(j.bytes, o.port, '127.0.0.1');
    if (i % 10 === 9) await sleep(PACE_MS); // ~2,000/s: the relay's socket keeps up (a burst, not a loss test)
  }
  const sendMs = performance.now() - t0;
  await sleep(300);
  for (const sock of socks) sock.close();
  o.stats.datagrams += size;
  o.stats.vnEligible += vnEligible;
  o.stats.retryEligible += retryEligible;
  o.stats.version_negotiation += vn;
  o.stats.retry += retry;
  if (vnEligible >= 10 && vn === 0) problems.push(['missingAnswer', `burst ${b}: ${vnEligible} Initials of other versions and no Version Negotiation`]);
  const g = await o.goodClient();
  if (g !== null) problems.push(['stalled', `after burst ${b} (${size} datagrams): ${g}`]);
  o.log(`quic burst ${b}: ${size} junk datagrams in ${sendMs.toFixed(0)} ms, ${vn} VN, ${retry} Retry; good client ${g ?? 'ok'}`);
  return problems;
}
