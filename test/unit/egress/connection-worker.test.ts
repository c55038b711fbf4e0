// The per-validator connection state machine on loopback: connecting -> active, queued-while-connecting delivery,
// refused connect -> retrying with doubling backoff, closing with grace, and the LRU cache's eviction rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dgram from 'node:dgram';
import { ConnectionCache } from '../../../src/egress/connection-cache.js';
import { ConnectionWorker, type ConnectionWorkerOptions } from '../../../src/egress/connection-worker.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { createLogger } from '../../../src/log/logger.js';
import { createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';

const log = createLogger('silent', 'test');
let identity: IdentityCertificate;
let listener: TpuListener;
let port = 0;
const received: Uint8Array[] = [];

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return cond();
}

function opts(p: number, extra: Partial<ConnectionWorkerOptions> = {}): ConnectionWorkerOptions {
  return { host: '127.0.0.1', port: p, identity, maxIdleTimeoutMs: 5_000, keepAliveMs: 1_000, connectTimeoutMs: 500, retryMinMs: 40, retryMaxMs: 160, maxQueued: 64, log, ...extra };
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
    expect(await until(() => received.length === 2, 2_000)).toBe(true);
    expect(Buffer.from(received[0]).toString()).toBe('a transaction while connecting');
    const r = w.report();
    expect(r).toMatchObject({ state: 'active', connects: 1, connectFailures: 0, sent: 2, queued: 0 });
    expect(r.handshakeMs).toBeGreaterThan(0);
    await w.close(1_000);
    expect(w.state).toBe('closed');
    expect(w.send(Buffer.from('late'))).toBe('dropped:no_connection');
  });

  it('a refused connect goes to retrying with a doubling, capped backoff; sends meanwhile answer no_connection at once', async () => {
    const w = new ConnectionWorker(opts(await deadPort()));
    const pending = w.send(Buffer.from('x'));
    expect(await pending).toBe('dropped:no_connection');
    expect(await until(() => w.state === 'retrying', 1_000)).toBe(true);
    expect(w.send(Buffer.from('y'))).toBe('dropped:no_connection');
    expect(await until(() => w.report().connectFailures >= 4, 2_000)).toBe(true);
    await w.close(0);
    expect(w.state).toBe('closed');
    expect(w.report().droppedNoConnection).toBe(2);
  });
});

describe('ConnectionCache', () => {
  it('one worker per target; beyond maxConnections it evicts the LRU outside its grace period, never a pinned one', async () => {
    const cache = new ConnectionCache({
      identity, maxConnections: 2, evictionGraceMs: 50, idleCloseMs: 60_000, maxIdleTimeoutMs: 5_000, keepAliveMs: 1_000,
      connectTimeoutMs: 500, retryMinMs: 40, retryMaxMs: 160, maxQueuedPerConnection: 64, log,
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
