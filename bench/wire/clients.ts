// The wire-to-wire bench's load clients (bench process, one event loop; hot while a cell runs). Each sends transaction
// number i and stamps sentNs[i] = process.hrtime.bigint() (CLOCK_MONOTONIC, minus the bench's base) right after the
// call that handed the request's last byte to the kernel returned:
//   http  raw keep-alive HTTP/1.1 over node:net, one write() per request (headers + body in one buffer: libuv writes
//         it synchronously when the socket has room); the answer's arrival is stamped too (answerNs: client round trip)
//   uni   IngressClient.sendUni: the stream's data + FIN written and flushed in the call when credit allows, else
//         stamped when its promise settles (after the flush of the datagram that wrote it; counted as `deferred`)
//   bidi  IngressClient.request (MessagePack {transaction}); in flight capped below the stream credit, so it is written
//         in the call; answerNs at the answer
// Pacing: open loop, 1 ms timer ticks (what is due by now goes out; bursts of rate/1000); a request that finds every
// HTTP connection busy waits for the next free one (its stamp is then its real write). rate 0 = saturation: every
// connection kept busy (HTTP), or the stream window kept full (QUIC).
import net from 'node:net';
import type { IngressClient } from '../../src/client/quic/ingress-client.js';

export const BASE_NS = process.hrtime.bigint();
export const nowNs = (): number => Number(process.hrtime.bigint() - BASE_NS);

export interface Stamps {
  /** Per transaction index: ns since BASE_NS at last byte written (NaN: not sent). */
  readonly sentNs: Float64Array;
  /** Per transaction index: ns since BASE_NS at the answer (NaN: none or no answer for this ingress). */
  readonly answerNs: Float64Array;
  /** Per transaction index: 1 when its answer was a refusal (HTTP status != 200 or an error body, QUIC refusal). */
  readonly refused: Uint8Array;
}

export interface CellRun {
  readonly first: number;
  readonly sent: number;
  readonly seconds: number;
  /** Answers that were not a success (HTTP status != 200, QUIC refusal). */
  readonly refused: number;
  /** uni/bidi: stamps taken at promise settlement instead of in the call. */
  readonly deferred: number;
}

/** The bytes of transaction `i` to send (the caller builds them before the cell starts). */
export type TxSource = (i: number) => Uint8Array;

export interface HttpTarget {
  readonly port: number;
  /** Request bytes for transaction i (head + body), built before the cell. */
  readonly request: (i: number) => Buffer;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `connections` keep-alive sockets to 127.0.0.1:port. */
export async function openHttp(port: number, connections: number): Promise<net.Socket[]> {
  return Promise.all(
    Array.from({ length: connections }, () => new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(s));
      s.once('error', reject);
      s.on('error', () => undefined); // a reset mid-cell shows as answers missing, not as a crash
    })),
  );
}

/** One HTTP cell over the given sockets: `count` requests (indexes first..first+count-1) at `rate`/s (0 = saturation). */
export async function runHttp(socks: readonly net.Socket[], req: (i: number) => Buffer, first: number, count: number, rate: number, st: Stamps, maxMs: number): Promise<CellRun> {
  let refused = 0;
  let done = 0;
  let issued = 0;
  const idle: number[] = [];
  const current = new Int32Array(socks.length).fill(-1);
  const bufs: Buffer[] = socks.map(() => Buffer.alloc(0));
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const send = (c: number): void => {
    const i = first + issued++;
    current[c] = i;
    socks[c].write(req(i));
    st.sentNs[i] = nowNs();
  };
  const listeners = socks.map((s, c) => {
    const onData = (chunk: Buffer): void => {
      let b = bufs[c].length === 0 ? chunk : Buffer.concat([bufs[c], chunk]);
      for (;;) {
        const h = b.indexOf('\r\n\r\n');
        if (h < 0) break;
        const head = b.subarray(0, h).toString('latin1');
        const m = /content-length: *(\d+)/i.exec(head);
        const len = m === null ? 0 : Number(m[1]);
        if (b.length < h + 4 + len) break;
        const i = current[c];
        st.answerNs[i] = nowNs();
        if (!head.startsWith('HTTP/1.1 200') || b.subarray(h + 4, h + 4 + len).includes('"error"')) {
          refused++;
          st.refused[i] = 1;
        }
        b = b.subarray(h + 4 + len);
        current[c] = -1;
        done++;
        if (issued < count && (rate === 0 || issued < dueNow())) send(c);
        else idle.push(c);
        if (done === count) finished();
      }
      bufs[c] = b;
    };
    s.on('data', onData);
    return onData;
  });
  const t0 = performance.now();
  const dueNow = (): number => Math.min(count, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
  for (let c = 0; c < socks.length; c++) idle.push(c);
  while (issued < count && performance.now() - t0 < maxMs) {
    const due = rate === 0 ? count : dueNow();
    while (issued < due && idle.length > 0) send(idle.pop()!);
    await sleep(1);
  }
  await Promise.race([allDone, sleep(3_000)]);
  const seconds = (performance.now() - t0) / 1000;
  socks.forEach((s, c) => s.off('data', listeners[c]));
  return { first, sent: issued, seconds, refused, deferred: 0 };
}

/** One QUIC cell: uni streams (kind 'uni') or acknowledged bidi requests ('bidi') spread over the clients. */
export async function runQuic(kind: 'uni' | 'bidi', clients: readonly IngressClient[], tx: TxSource, first: number, count: number, rate: number, st: Stamps, maxMs: number, window: number): Promise<CellRun> {
  let refused = 0;
  let deferred = 0;
  let settled = 0;
  let issued = 0;
  const inFlight = new Int32Array(clients.length);
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  let next = 0;
  /** false once the send loop below ended (every one issued, or maxMs). */
  let sending = true;
  const sendOne = (): boolean => {
    for (let k = 0; k < clients.length; k++) {
      const c = (next + k) % clients.length;
      if (inFlight[c] >= window) continue;
      next = c + 1;
      const cl = clients[c];
      const i = first + issued++;
      const before = cl.backlog;
      inFlight[c]++;
      const p = kind === 'uni' ? cl.sendUni(tx(i)) : cl.request({ transaction: tx(i) });
      const sync = cl.backlog === before;
      if (sync) st.sentNs[i] = nowNs();
      void p.then((r) => {
        inFlight[c]--;
        const t = nowNs();
        if (!sync) {
          deferred++;
          if (kind === 'uni') st.sentNs[i] = t;
          else st.sentNs[i] = NaN; // a bidi request's write time is not observable: left out
        }
        if (kind === 'bidi') {
          st.answerNs[i] = t;
          if (r.kind !== 'answer' || r.answer.accepted !== true) {
            refused++;
            st.refused[i] = 1;
          }
        } else if (r.kind !== 'written') {
          refused++;
          st.refused[i] = 1;
        }
        // All settled: `count` if every one went out, else what went out before maxMs (else the cell's seconds would
        // take in the 3 s wait below, and its sent/s come out far too low: the 5,217/s of bidi at 20,000 in wire.md).
        if (++settled === (sending ? count : issued)) finished();
      });
      return true;
    }
    return false;
  };
  const t0 = performance.now();
  while (issued < count && performance.now() - t0 < maxMs) {
    const due = rate === 0 ? count : Math.min(count, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
    while (issued < due && sendOne()) {
      /* sent */
    }
    await sleep(1);
  }
  sending = false;
  if (settled === issued) finished();
  await Promise.race([allDone, sleep(3_000)]);
  return { first, sent: issued, seconds: (performance.now() - t0) / 1000, refused, deferred };
}
