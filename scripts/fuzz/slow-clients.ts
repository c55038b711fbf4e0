// The live fuzzer's keep-alive slow-client phase (harness process; cold): raw TCP sockets against the same relay,
// all at once (a few dozen), each with one whole request answered first (or a request answered early), then bytes
// dribbled one at a time on the same connection: a request line, headers, a body, or garbage. docs/http-runtime.md
// and issue #15: a slow client is closed 8-12 s in, on a kept-alive connection too (issue #30 item 9); an answer
// written before a declared body closes the connection (docs/relay-api.md). Judged from the first dribbled byte:
// closed (possibly after a 408/400 answer) within BOUND_MS is expected. A request line, headers or garbage started
// after an answer is held for http.idleTimeoutSeconds (60 s) on the maintained prebuilt uWS build only
// (docs/known-issues.md; our source build's patch 0002 and the legacy build close it within the bound): there, still
// open at BOUND_MS, it is counted knownLimitation, not waited for; on any other build (asked of /health?detail) it
// fails the run as heldPastBound.
import { connect, type Socket } from 'node:net';
import { KEYS } from './keys.js';
import { newPhase, notePhase, type PhaseSummary } from './phase-summary.js';
import { caseRng, type Rng } from './rng.js';

export const SLOW_CLASSES = ['expected', 'knownLimitation', 'heldPastBound', 'unexpectedAnswer', 'unexpectedClose'] as const;
/** The slow-client bound from the first dribbled byte: uWS's 10 s timer swept every 4 s (8-12 s), plus 2.5 s slack. */
export const BOUND_MS = 14_500;
const SLOW_BASE = (1 << 30) + (1 << 29);

export interface SlowPhaseOptions {
  readonly seed: number;
  readonly clients: number;
  readonly examples: number;
  readonly relayUrl: string;
  readonly rpcUrl: string;
}

type Kind =
  | 'request line after an answer'
  | 'headers after an answer'
  | 'garbage after an answer'
  | 'body after an answer'
  | 'chunked body after an answer'
  | 'body behind an early answer'
  | 'body behind an early answer, after an answer';

/** Kinds the maintained uWS build holds for the idle timeout (docs/known-issues.md): known there, not failing. */
const KNOWN_HELD: readonly Kind[] = ['request line after an answer', 'headers after an answer', 'garbage after an answer'];

interface Plan {
  readonly kind: Kind;
  readonly host: 'relay' | 'rpc';
  /** A whole request answered before the dribble ('' : none, the early-answer request is the first). */
  readonly first: string;
  /** Sent at once after the first answer (or first of all). */
  readonly prefix: string;
  /** Dribbled one byte every intervalMs, cycling. */
  readonly drip: Buffer;
  readonly intervalMs: number;
  /** The status the early answer must have (body behind an early answer), else null. */
  readonly early: number | null;
  readonly label: string;
}

const HEALTH = 'GET /health HTTP/1.1\r\nhost: relay\r\n\r\n';

function early(rng: Rng): { host: 'relay' | 'rpc'; head: string; status: number; what: string } {
  const len = rng.range(2_000, 40_000);
  switch (rng.int(5)) {
    case 0:
      return { host: 'relay', head: `POST /nowhere HTTP/1.1\r\nhost: relay\r\ncontent-length: ${len}\r\n\r\n`, status: 404, what: '404 (relay host)' };
    case 1:
      return { host: 'rpc', head: `POST /nowhere HTTP/1.1\r\nhost: relay\r\ncontent-length: ${len}\r\n\r\n`, status: 405, what: '405 (rpc host)' };
    case 2:
      return { host: 'relay', head: `POST /v1/submit HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ncontent-length: ${len}\r\n\r\n`, status: 401, what: '401 (no key)' };
    case 3:
      return { host: 'rpc', head: 'POST / HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n10\r\n', status: 401, what: '401 (chunked, no key)' };
    default:
      return { host: 'relay', head: `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${KEYS.fuzz.key}\r\ncontent-type: text/csv\r\ncontent-length: ${len}\r\n\r\n`, status: 415, what: '415 (content type)' };
  }
}

function plan(seed: number, index: number): Plan {
  const rng = caseRng(seed, SLOW_BASE + index);
  const table: readonly (readonly [number, Kind])[] = [
    [3, 'request line after an answer'],
    [2, 'headers after an answer'],
    [2, 'garbage after an answer'],
    [3, 'body after an answer'],
    [1, 'chunked body after an answer'],
    [2, 'body behind an early answer'],
    [2, 'body behind an early answer, after an answer'],
  ];
  // One of each kind first (a short run covers them all), then drawn by weight.
  const drawn = rng.weighted(table);
  const kind = index < table.length ? table[index][1] : drawn;
  const host = rng.chance(0.5) ? 'relay' : 'rpc';
  const intervalMs = rng.range(100, 1_500);
  const pad = 'a'.repeat(rng.range(1, 64));
  const len = rng.range(2_000, 40_000);
  const key = `x-api-key: ${KEYS.fuzz.key}\r\n`;
  const base = { host, first: HEALTH, intervalMs, early: null } as const;
  switch (kind) {
    case 'request line after an answer': {
      const line = rng.pick([`GET /health HTTP/1.1\r\nhost: relay\r\nx-pad: ${pad}`, `POST /v1/submit HTTP/1.1\r\nx-p: ${pad}`, `GET /${pad}`]);
      return { ...base, kind, prefix: '', drip: Buffer.from(line), label: `${host} host, ${JSON.stringify(line.slice(0, 30))} at 1 byte/${intervalMs} ms` };
    }
    case 'headers after an answer':
      return { ...base, kind, prefix: rng.pick(['POST /v1/submit HTTP/1.1\r\n', 'POST / HTTP/1.1\r\n', 'GET /health HTTP/1.1\r\n']), drip: Buffer.from(`x-h: ${pad}\r\n`), label: `${host} host, header lines at 1 byte/${intervalMs} ms` };
    case 'garbage after an answer': {
      const g = rng.chance(0.5) ? Buffer.from(Array.from({ length: 32 }, () => 0x61 + rng.int(26))) : rng.bytes(32);
      return { ...base, kind, prefix: '', drip: g, label: `${host} host, ${g[0] >= 0x61 && g[0] <= 0x7a ? 'letters' : 'random bytes'} at 1 byte/${intervalMs} ms` };
    }
    case 'body after an answer': {
      const head = host === 'relay'
        ? `POST /v1/submit HTTP/1.1\r\nhost: relay\r\n${key}content-type: application/json\r\ncontent-length: ${len}\r\n\r\n`
        : `POST / HTTP/1.1\r\nhost: relay\r\n${key}content-type: application/json\r\ncontent-length: ${len}\r\n\r\n`;
      return { ...base, kind, prefix: head, drip: Buffer.from(rng.pick(['{', ' ', '["'])), label: `${host} host, a ${len}-byte body at 1 byte/${intervalMs} ms` };
    }
    case 'chunked body after an answer': {
      const head = `POST ${host === 'relay' ? '/v1/submit' : '/'} HTTP/1.1\r\nhost: relay\r\n${key}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n400\r\n`;
      return { ...base, kind, prefix: head, drip: Buffer.from(' '), label: `${host} host, a chunk of 1,024 bytes at 1 byte/${intervalMs} ms` };
    }
    default: {
      const e = early(rng);
      const first = kind === 'body behind an early answer' ? '' : HEALTH;
      return { kind, host: e.host, first, prefix: e.head, drip: Buffer.from(rng.pick(['z', '{', ' '])), intervalMs, early: e.status, label: `${e.host} host, early ${e.what}, body at 1 byte/${intervalMs} ms` };
    }
  }
}

interface Outcome {
  /** The answers as received (status lines and all), in order. */
  text: string;
  /** ms from the first dribbled byte to the close; undefined: still open at BOUND_MS. */
  closedAfterMs: number | undefined;
  /** Closed before the first answer was complete. */
  closedEarly: boolean;
}

/** One complete HTTP/1.1 answer with a content-length at the start of `text`: its length, or -1. */
function answerLength(text: string): number {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return -1;
  const m = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  const n = m === null ? 0 : Number(m[1]);
  return text.length >= end + 4 + n ? end + 4 + n : -1;
}

function runOne(url: string, p: Plan): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    socket.setEncoding('latin1');
    const out: Outcome = { text: '', closedAfterMs: undefined, closedEarly: false };
    let startedAt = 0;
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    let giveUp: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve(out);
    };
    const start = (): void => {
      startedAt = Date.now();
      if (p.prefix !== '') socket.write(p.prefix);
      const drip = (): void => {
        if (!socket.destroyed) socket.write(p.drip.subarray(i % p.drip.length, (i % p.drip.length) + 1));
        i++;
      };
      drip();
      timer = setInterval(drip, p.intervalMs);
      giveUp = setTimeout(finish, BOUND_MS);
    };
    socket.on('error', () => undefined); // a reset is a close
    socket.on('close', () => {
      if (done) return; // our own destroy at BOUND_MS: still open then
      if (startedAt > 0) out.closedAfterMs ??= Date.now() - startedAt;
      else out.closedEarly = true;
      finish();
    });
    socket.on('data', (d: string) => {
      out.text += d;
      if (startedAt === 0 && answerLength(out.text) > 0) start();
    });
    socket.once('connect', () => {
      if (p.first === '') start();
      else socket.write(p.first);
    });
  });
}

/** The problem with what the server wrote, or null. */
function judgeText(p: Plan, o: Outcome): string | null {
  let rest = o.text;
  if (p.first !== '') {
    const n = answerLength(rest);
    if (!rest.startsWith('HTTP/1.1 200 ')) return `the first answer: ${JSON.stringify(rest.slice(0, 120))}`;
    rest = rest.slice(n);
  }
  if (p.early !== null) {
    if (!rest.startsWith(`HTTP/1.1 ${p.early} `)) return `expected an early ${p.early}, got ${JSON.stringify(rest.slice(0, 160))}`;
    const head = rest.slice(0, rest.indexOf('\r\n\r\n'));
    if (!/\r\nconnection: close/i.test(head)) return `the early ${p.early} does not say connection: close: ${JSON.stringify(head)}`;
    rest = rest.slice(Math.max(0, answerLength(rest)));
  }
  // After the dribble started: nothing, or one error answer closing the connection.
  if (rest !== '' && !/^HTTP\/1\.1 (400|408|413|431|505) /.test(rest)) return `after the dribble: ${JSON.stringify(rest.slice(0, 160))}`;
  return null;
}

/** The uWS build the relay runs, as GET /health?detail reports it (docs/http-runtime.md); 'unknown' when it cannot say. */
async function relayBuild(relayUrl: string): Promise<string> {
  try {
    const detail = (await (await fetch(`${relayUrl}/health?detail`, { signal: AbortSignal.timeout(5_000) })).json()) as { http?: { build?: unknown } };
    return typeof detail.http?.build === 'string' ? detail.http.build : 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function runSlowPhase(o: SlowPhaseOptions): Promise<PhaseSummary> {
  const p = newPhase('keep-alive slow clients', SLOW_CLASSES, ['expected', 'knownLimitation']);
  const started = performance.now();
  const build = await relayBuild(o.relayUrl);
  const heldIsKnown = build === 'maintained';
  const plans = Array.from({ length: o.clients }, (_, i) => plan(o.seed, i));
  const outcomes = await Promise.all(plans.map((pl) => runOne(pl.host === 'relay' ? o.relayUrl : o.rpcUrl, pl)));
  const closed: number[] = [];
  let knownHeld = 0;
  outcomes.forEach((out, i) => {
    const pl = plans[i];
    p.run++;
    const what = `${pl.label}: `;
    if (out.closedEarly) return notePhase(p, 'unexpectedClose', pl.kind, i, `${what}closed before the first answer: ${JSON.stringify(out.text.slice(0, 160))}`, o.examples);
    const bad = judgeText(pl, out);
    if (bad !== null) return notePhase(p, 'unexpectedAnswer', pl.kind, i, what + bad, o.examples);
    if (out.closedAfterMs !== undefined) {
      closed.push(out.closedAfterMs);
      return notePhase(p, 'expected', pl.kind, i, '', o.examples);
    }
    if (heldIsKnown && KNOWN_HELD.includes(pl.kind)) {
      knownHeld++;
      return notePhase(p, 'knownLimitation', pl.kind, i, `${what}still open ${BOUND_MS} ms after the first dribbled byte (held for http.idleTimeoutSeconds on the maintained uWS build)`, o.examples);
    }
    notePhase(p, 'heldPastBound', pl.kind, i, `${what}still open ${BOUND_MS} ms after the first dribbled byte (uWS build ${build})`, o.examples);
  });
  closed.sort((a, b) => a - b);
  Object.assign(p.figures, {
    'closed within the bound, ms min/p50/max': closed.length === 0 ? '-' : `${closed[0]}/${closed[closed.length >> 1]}/${closed[closed.length - 1]}`,
    'bound from the first dribbled byte, ms': BOUND_MS,
    'uWS build': build,
    'held (known limitation, maintained build only)': knownHeld,
  });
  p.elapsedMs = Math.round(performance.now() - started);
  return p;
}
