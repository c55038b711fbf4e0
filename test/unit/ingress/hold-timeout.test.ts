// The QUIC ingress endpoint's back-pressure (src/ingress/ingress-endpoint.ts, docs/quic-ingress.md "Back-pressure")
// against a fake front whose queue is full at will: an in-process quiche pair on 127.0.0.1, our IngressClient
// (src/client/quic/ingress-client.ts) and the real IngressEndpoint with frontHasRoom / onStream / onAuthenticate
// answered by the test. What the client and the counters see: while the queue is full no stream is read and the
// client waits for credit; with room again every stream is delivered; a front that never drains gets its streams
// refused `overloaded` (uni: counted; bidi: the overloaded answer) once the hold outlasts holdTimeoutMs, and not
// before; a stream half-read before the hold is not refused `unfinished` for the time it was held.
import { afterEach, describe, expect, it } from 'vitest';
import { pack } from 'msgpackr';
import { IngressClient, type StreamResult } from '../../../src/client/quic/ingress-client.js';
import { IngressEndpoint } from '../../../src/ingress/ingress-endpoint.js';
import { createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { attachIngressCounters, createIngressCounters, INGRESS_COUNTER, streamCounterIndex } from '../../../src/shm/ingress-layout.js';
import { until } from '../../helpers/wait-for.js';

const STREAMS = 4; // the endpoint's MAX_STREAMS: a burst of 20 needs credit back five times
const OVERLOADED_REPLY = pack({ accepted: false, error: { reason: 'overloaded' } });

interface Rig {
  endpoint: IngressEndpoint;
  client: IngressClient;
  readonly k: Float64Array;
  /** Streams the fake front took (their first byte). */
  readonly delivered: number[];
  /** Whether the fake front's queue has room. */
  room: boolean;
}

let rigs: Rig[] = [];
let cert: IdentityCertificate | null = null;

afterEach(async () => {
  for (const r of rigs) {
    r.client.close();
    await r.endpoint.close();
  }
  rigs = [];
});

async function rig(holdTimeoutMs: number, streamTimeoutMs = 2_000): Promise<Rig> {
  cert ??= await createRandomIdentityCertificate();
  const k = attachIngressCounters(createIngressCounters());
  const delivered: number[] = [];
  const r = { k, delivered, room: true } as Rig;
  r.endpoint = await IngressEndpoint.listen({
    host: '127.0.0.1',
    port: 0,
    keyPem: cert.keyPem,
    certPem: cert.certPem,
    maxConnections: 4,
    maxConnectionsPerKey: 4,
    maxConcurrentStreams: STREAMS,
    maxUniBytes: 1_232,
    maxBidiBytes: 1_744,
    idleTimeoutMs: 10_000,
    streamTimeoutMs,
    replyTimeoutMs: 5_000,
    holdTimeoutMs,
    counters: k,
    overloadedReply: OVERLOADED_REPLY,
    onAuthenticate: (connId) => {
      queueMicrotask(() => r.endpoint.authResult(connId, 1));
      return true;
    },
    onStream: (_kind, _keyId, connId, streamId, bytes) => {
      delivered.push(bytes[0]);
      // The front's verdict (accepted), as the reply loop would apply it.
      queueMicrotask(() => r.endpoint.verdict(connId, streamId, 0));
      return true;
    },
    frontHasRoom: () => r.room,
  });
  r.client = await IngressClient.connect({ host: '127.0.0.1', port: r.endpoint.address().port, certificate: cert });
  // Authenticated (the microtask above) before the test sends.
  await until(() => k[INGRESS_COUNTER.connectionsActive] === 1, 2_000);
  rigs.push(r);
  return r;
}

function tx(n: number, bytes = 200): Uint8Array {
  return new Uint8Array(bytes).fill(n);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('IngressEndpoint back-pressure against a fake front', () => {
  it('holds a connection while the queue is full (nothing read, the client waits for credit), delivers everything once there is room', async () => {
    const r = await rig(5_000);
    r.room = false;
    const sent = Array.from({ length: 20 }, (_, i) => r.client.sendUni(tx(i + 1)));
    await until(() => r.k[INGRESS_COUNTER.connectionsHeld] === 1, 2_000);
    await sleep(300);
    expect(r.delivered).toEqual([]);
    expect(r.client.backlog, 'streams waiting for credit the relay did not give back').toBe(20 - STREAMS);
    expect(r.k[INGRESS_COUNTER.holds]).toBe(1);
    r.room = true;
    for (const s of await Promise.all(sent)) expect(s).toEqual({ kind: 'written' });
    await until(() => r.delivered.length === 20, 2_000);
    expect(r.delivered).toEqual(Array.from({ length: 20 }, (_, i) => i + 1)); // in order, none lost
    expect(r.k[INGRESS_COUNTER.connectionsHeld]).toBe(0);
    expect(r.k[INGRESS_COUNTER.streamsHeld]).toBeGreaterThanOrEqual(STREAMS);
    expect(r.k[streamCounterIndex('overloaded')]).toBe(0);
    expect(r.k[INGRESS_COUNTER.holdTimeouts]).toBe(0);
  });

  it('a front that never drains: uni and bidi streams refused overloaded once the hold outlasts holdTimeoutMs, not before', async () => {
    const HOLD_MS = 400;
    const r = await rig(HOLD_MS);
    r.room = false;
    const t0 = performance.now();
    const uni = Array.from({ length: 10 }, (_, i) => r.client.sendUni(tx(i + 1)));
    let answeredAt = 0;
    const bidi = r.client.requestRaw(tx(99)).then((a: StreamResult) => {
      answeredAt = performance.now();
      return a;
    });
    await sleep(HOLD_MS / 2);
    expect(r.k[streamCounterIndex('overloaded')], 'refused before the bound').toBe(0);
    expect(r.k[INGRESS_COUNTER.connectionsHeld]).toBe(1);
    // Every uni stream gets its credit back (read and refused) and is written; the bidi one gets the overloaded answer.
    for (const s of await Promise.all(uni)) expect(s).toEqual({ kind: 'written' });
    expect(await bidi).toEqual({ kind: 'answer', answer: { accepted: false, error: { reason: 'overloaded' } } });
    expect(answeredAt - t0).toBeGreaterThanOrEqual(HOLD_MS - 5);
    await until(() => r.k[streamCounterIndex('overloaded')] === 11, 2_000);
    expect(r.delivered).toEqual([]);
    expect(r.k[INGRESS_COUNTER.holdTimeouts]).toBe(1);
    // The queue has room again: the connection is released and reads as before.
    r.room = true;
    await r.client.sendUni(tx(42));
    await until(() => r.delivered.length === 1, 2_000);
    expect(r.delivered).toEqual([42]);
    expect(r.k[INGRESS_COUNTER.connectionsHeld]).toBe(0);
    expect(r.k[streamCounterIndex('overloaded')]).toBe(11);
  });

  it('a stream half-read before the hold is not refused unfinished for the time it was held', async () => {
    const r = await rig(5_000, 200);
    // Its first part is read (a partial stream), then the queue fills, then its end arrives and waits unread past
    // streamTimeoutMs (200 ms).
    const late = r.client.sendUniLate(tx(7, 100), tx(7, 100), 100);
    await sleep(50);
    r.room = false;
    expect(await late).toEqual({ kind: 'written' });
    await until(() => r.k[INGRESS_COUNTER.connectionsHeld] === 1, 2_000);
    await sleep(500);
    expect(r.k[streamCounterIndex('unfinished')]).toBe(0);
    r.room = true;
    await until(() => r.delivered.length === 1, 2_000);
    expect(r.delivered).toEqual([7]);
    expect(r.k[streamCounterIndex('unfinished')]).toBe(0);
  });
});
