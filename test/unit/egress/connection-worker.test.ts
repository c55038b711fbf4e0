// The per-validator connection state machine on loopback: connecting -> active, queued-while-connecting delivery,
// refused connect -> retrying with doubling backoff, closing with grace, and the LRU cache's eviction rules. Stalled
// peers: one that grants no stream credit (MAX_STREAMS 0, Agave's "parked" unstaked peer) and one that swallows every
// datagram after the handshake (no ACK ever): queued transactions end as dropped:stale after staleAfterMs, each
// with its own outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dgram from 'node:dgram';
import { ConnectionCache } from '../../../src/egress/quic/connection-cache.js';
import { ConnectionWorker, type ConnectionWorkerOptions } from '../../../src/egress/quic/connection-worker.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { createLogger } from '../../../src/log/logger.js';
import { createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { until } from '../../helpers/wait-for.js';

const log = createLogger('silent', 'test');
let identity: IdentityCertificate;
let listener: TpuListener;
let port = 0;
const received: Uint8Array[] = [];

function opts(p: number, extra: Partial<ConnectionWorkerOptions> = {}): ConnectionWorkerOptions {
  return { host: '127.0.0.1', port: p, identity, maxIdleTimeoutMs: 5_000, keepAliveMs: 1_000, connectTimeoutMs: 500, retryMinMs: 40, retryMaxMs: 160, maxQueued: 64, staleAfterMs: 2_000, log, ...extra };
}

/** A UDP port nobody listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const p = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

beforeAll(async () => {
  identity = await createRandomIdentityCertificate();
  listener = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'v', onTransaction: (tx) => received.push(tx) });
  await listener.start();
  port = listener.address().port;
});
afterAll(async () => {
  await listener.stop();
});

describe('ConnectionWorker', () => {
  it('queues while connecting (copying the bytes), answers sent once written, then sends synchronously when active', async () => {
    const w = new ConnectionWorker(opts(port));
    expect(w.state).toBe('connecting');
    const buf = Buffer.from('a transaction while connecting');
    const p = w.send(buf);
    expect(typeof p).not.toBe('string');
    buf.fill(0); // the caller reuses its buffer at once
    expect(await p).toBe('sent');
    expect(w.state).toBe('active');
    expect(w.send(Buffer.from('second'))).toBe('sent');
    await until(() => received.length === 2, 2_000);
    expect(Buffer.from(received[0]).toString()).toBe('a transaction while connecting');
    const r = w.report();
    expect(r).toMatchObject({ state: 'active', connects: 1, connectFailures: 0, sent: 2, queued: 0 });
    expect(r.handshakeMs).toBeGreaterThan(0);
    await w.close(1_000);
    expect(w.state).toBe('closed');
    expect(w.send(Buffer.from('late'))).toBe('dropped:no_connection');
  });

  it('rebroadcasts wait behind first sends: queued while connecting, a later first send is written before them; each class has its own bound', async () => {
    const w = new ConnectionWorker(opts(port, { maxQueued: 4 }));
    const before = received.length;
    const order: string[] = [];
    const track = (name: string, r: ReturnType<ConnectionWorker['send']>): void => {
      if (typeof r === 'string') order.push(`${name}:${r}`);
      else void r.then((o) => order.push(`${name}:${o}`));
    };
    for (let i = 0; i < 5; i++) track(`again${i}`, w.send(Buffer.from(`rebroadcast ${i}`), true));
    // The rebroadcast queue is full (4): the fifth is refused, and a first send is still taken.
    expect(order).toEqual(['again4:dropped:queue_full']);
    track('first', w.send(Buffer.from('first send')));
    await until(() => order.length === 6, 2_000);
    expect(order.slice(1)).toEqual(['first:sent', 'again0:sent', 'again1:sent', 'again2:sent', 'again3:sent']);
    await until(() => received.length === before + 5, 2_000);
    const got = received.slice(before).map((b) => Buffer.from(b).toString()).sort();
    expect(got).toEqual(['first send', 'rebroadcast 0', 'rebroadcast 1', 'rebroadcast 2', 'rebroadcast 3']);
    // Active with credit: both classes are written at once.
    expect(w.send(Buffer.from('again'), true)).toBe('sent');
    expect(w.send(Buffer.from('fresh'))).toBe('sent');
    await w.close(1_000);
  });

  it('a refused connect goes to retrying with a doubling, capped backoff; sends meanwhile answer no_connection at once', async () => {
    const w = new ConnectionWorker(opts(await deadPort()));
    const pending = w.send(Buffer.from('x'));
    expect(await pending).toBe('dropped:no_connection');
    await until(() => w.state === 'retrying', 1_000);
    expect(w.send(Buffer.from('y'))).toBe('dropped:no_connection');
    await until(() => w.report().connectFailures >= 4, 2_000);
    await w.close(0);
    expect(w.state).toBe('closed');
    expect(w.report().droppedNoConnection).toBe(2);
  });

  it('reconnect: false: a refused connect or a connection the peer closes ends the worker (closed), never retried', async () => {
    const refused = new ConnectionWorker(opts(await deadPort(), { reconnect: false }));
    expect(await refused.send(Buffer.from('x'))).toBe('dropped:no_connection');
    expect(await refused.firstAttempt).toBe(false);
    expect(refused.state).toBe('closed');
    await new Promise((r) => setTimeout(r, 200)); // several retryMinMs (40 ms)
    expect(refused.report()).toMatchObject({ state: 'closed', connects: 1, connectFailures: 1 });

    // A listener that closes the connection on a stream over 1232 bytes (invalid stream).
    const strict = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'v', maxTransactionBytes: 1232, onTransaction: () => undefined });
    await strict.start();
    try {
      const w = new ConnectionWorker(opts(strict.address().port, { reconnect: false, maxTransactionBytes: 4096 }));
      expect(await w.firstAttempt).toBe(true);
      expect(w.send(Buffer.alloc(100, 1))).toBe('sent');
      expect(w.transportStats()).toMatchObject({ state: 'established', transactionsWritten: 1 });
      expect(w.send(Buffer.alloc(2000, 2))).toBe('sent');
      await until(() => w.state === 'closed', 2_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(w.report()).toMatchObject({ state: 'closed', connects: 1 });
      expect(w.transportStats()).toBeNull();
      expect(w.send(Buffer.from('late'))).toBe('dropped:no_connection');
    } finally {
      await strict.stop();
    }
  });
});

/**
 * A UDP relay in front of `target` that forwards both ways until `swallow()` is called, then drops every datagram in
 * both directions: the peer goes silent after the handshake (no ACK, no MAX_STREAMS, nothing).
 */
async function silentAfterHandshake(target: number): Promise<{ port: number; swallow(): void; close(): Promise<void> }> {
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  let client: { address: string; port: number } | null = null;
  let swallowing = false;
  front.on('message', (m, rinfo) => {
    client = { address: rinfo.address, port: rinfo.port };
    if (!swallowing) back.send(m, target, '127.0.0.1');
  });
  back.on('message', (m) => {
    if (!swallowing && client !== null) front.send(m, client.port, client.address);
  });
  await new Promise<void>((r) => front.bind(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => back.bind(0, '127.0.0.1', () => r()));
  return {
    port: front.address().port,
    swallow: () => void (swallowing = true),
    close: async () => {
      await new Promise<void>((r) => front.close(() => r()));
      await new Promise<void>((r) => back.close(() => r()));
    },
  };
}

describe('ConnectionWorker: every transaction gets its own outcome', () => {
  it('while connecting, a transaction over 1232 bytes answers failed at once and does not take another one\'s outcome', async () => {
    const before = received.length;
    const w = new ConnectionWorker(opts(port));
    const ok1 = w.send(Buffer.from('first, while connecting'));
    const big = w.send(new Uint8Array(1300).fill(7));
    const ok2 = w.send(Buffer.from('second, while connecting'));
    expect(big).toBe('failed');
    expect(await ok1).toBe('sent');
    expect(await ok2).toBe('sent');
    await until(() => received.length === before + 2, 2_000);
    expect(w.report()).toMatchObject({ sent: 2, failed: 1, droppedQueueFull: 0 });
    await w.close(0);
  });

  it('maxTransactionBytes 4096 (SIMD-0296) lets a 1300-byte transaction through to a listener that takes it', async () => {
    const got: Uint8Array[] = [];
    const big = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'v4096', maxTransactionBytes: 4096, onTransaction: (tx) => got.push(tx) });
    await big.start();
    const w = new ConnectionWorker(opts(big.address().port, { maxTransactionBytes: 4096 }));
    expect(await w.send(new Uint8Array(1300).fill(9))).toBe('sent');
    await until(() => got.length === 1, 2_000);
    expect(got[0].length).toBe(1300);
    await w.close(0);
    await big.stop();
  });
});

describe('ConnectionWorker: a stalled peer cannot hold a transaction longer than staleAfterMs', () => {
  it('a peer granting no stream credit (MAX_STREAMS 0): queued transactions end dropped:stale, in order, and are logged', async () => {
    const parked = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'parked', maxStreams: 0, onTransaction: () => undefined });
    await parked.start();
    const lines: Record<string, unknown>[] = [];
    const capture = createLogger('warn', 'test');
    capture.warn = ((o: Record<string, unknown>) => void lines.push(o)) as typeof capture.warn;
    const w = new ConnectionWorker(opts(parked.address().port, { staleAfterMs: 300, log: capture }));
    const t0 = performance.now();
    const a = w.send(Buffer.from('a'));
    await until(() => w.state === 'active', 2_000);
    const b = w.send(Buffer.from('b'));
    expect(typeof b).not.toBe('string'); // queued: no credit
    const outcomes = await Promise.all([a, b]);
    const waited = performance.now() - t0;
    expect(outcomes).toEqual(['dropped:stale', 'dropped:stale']);
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(1_500);
    expect(w.report()).toMatchObject({ state: 'active', queued: 0, droppedStale: 2, sent: 0 });
    expect(lines.some((l) => l.outcome === 'dropped:stale' && l.target === w.target)).toBe(true);
    // The connection stays usable: a later transaction is queued again (and ends the same way), nothing is stuck.
    expect(await w.send(Buffer.from('c'))).toBe('dropped:stale');
    await w.close(0);
    await parked.stop();
  });

  it('a peer that goes silent after the handshake (never ACKs): sends fill the congestion window, the rest end dropped:stale', async () => {
    const before = received.length;
    const relay = await silentAfterHandshake(port);
    const w = new ConnectionWorker(opts(relay.port, { staleAfterMs: 400, maxQueued: 4096 }));
    expect(await w.send(Buffer.from('handshake carrier'))).toBe('sent');
    await until(() => received.length === before + 1, 2_000);
    relay.swallow();
    const tx = new Uint8Array(1200).fill(1);
    const answers: (string | Promise<string>)[] = [];
    for (let i = 0; i < 200; i++) answers.push(w.send(tx));
    const sync = answers.filter((x) => x === 'sent').length;
    const outcomes = await Promise.all(answers);
    const stale = outcomes.filter((o) => o === 'dropped:stale').length;
    // No ACK ever comes back: quiche writes until the congestion window (~10 packets initially) is full.
    expect(sync).toBeGreaterThan(0);
    expect(sync).toBeLessThan(100);
    const tally: Record<string, number> = {};
    for (const o of outcomes) tally[o] = (tally[o] ?? 0) + 1;
    expect(stale, `outcomes ${JSON.stringify(tally)}, ${sync} sent at once`).toBe(200 - sync);
    expect(w.report()).toMatchObject({ droppedStale: stale, queued: 0 });
    await w.close(0);
    await relay.close();
  });
});

describe('ConnectionCache', () => {
  it('one worker per target; beyond maxConnections it evicts the LRU outside its grace period, never a pinned one', async () => {
    const cache = new ConnectionCache({
      identity, maxConnections: 2, evictionGraceMs: 50, idleCloseMs: 60_000, maxIdleTimeoutMs: 5_000, keepAliveMs: 1_000,
      connectTimeoutMs: 500, retryMinMs: 40, retryMaxMs: 160, maxQueuedPerConnection: 64, staleAfterMs: 2_000, log,
    });
    const a = cache.pin(`127.0.0.1:${port}`)!;
    expect(cache.get(`127.0.0.1:${port}`)).toBe(a);
    const b = cache.get('127.0.0.1:9')!;
    expect(cache.get('127.0.0.1:10')).toBeNull(); // b is inside its grace period, a is pinned
    await new Promise((r) => setTimeout(r, 80));
    const c = cache.get('127.0.0.1:10');
    expect(c).not.toBeNull();
    expect(cache.size).toBe(2);
    expect(cache.counters).toMatchObject({ evicted: 1, refusedFull: 1 });
    expect(['closing', 'closed']).toContain(b.state);
    await cache.close();
    expect(a.state).toBe('closed');
  });
});
