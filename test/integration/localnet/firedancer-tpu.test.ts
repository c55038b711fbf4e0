// Firedancer leaders on the localnet (docs/localnet.md "Leaders of both kinds"), driven by the relay's own QUIC client
// and egress connection worker over loopback: a stateless Retry on every new connection (and the transactions still
// arrive), no 0-RTT, unlimited stream credit, idle close (10 s by default, shorter when configured), the TPU-UDP port
// taking one transaction per datagram, and getClusterNodes publishing each node's kind (version, tpu).
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { TpuSender } from '../../helpers/tpu-sender.js';
import { until } from '../../helpers/wait-for.js';

const IDLE_MS = 1_000;
let ln: Localnet;
let id: IdentityCertificate;

function hostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

function payloads(n: number, tag: number): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => {
    const b = new Uint8Array(200);
    b[0] = tag;
    b[1] = i & 0xff;
    b[2] = i >> 8;
    return b;
  });
}

beforeAll(async () => {
  id = await createRandomIdentityCertificate();
  // Validator 0 Firedancer, 1 Agave; the QoS on (Firedancer must ignore it), Firedancer's idle shortened for the test.
  ln = await startLocalnet({ validators: 2, kinds: ['firedancer', 'agave'], firedancerIdleTimeoutMs: IDLE_MS, qos: { enabled: true } });
});

afterAll(async () => {
  await ln?.stop();
});

describe('Firedancer leaders on the localnet', () => {
  it('getClusterNodes publishes each node kind: a 0.x version and a TPU-UDP port for Firedancer, 2.x and none for Agave', async () => {
    const res = await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getClusterNodes' }) });
    const nodes = ((await res.json()) as { result: { pubkey: string; version: string; tpu: string | null; tpuQuic: string }[] }).result;
    const fd = nodes.find((n) => n.pubkey === ln.validators[0].identity)!;
    const agave = nodes.find((n) => n.pubkey === ln.validators[1].identity)!;
    expect(fd.version).toMatch(/^0\./);
    expect(fd.tpu).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(agave.version).toMatch(/^[234]\./);
    expect(agave.tpu).toBeNull();
  });

  it('answers every new connection with a Retry, and the transactions sent after it arrive', async () => {
    const l = ln.listeners[0];
    const before = l.counters;
    for (let k = 0; k < 3; k++) {
      const s = await TpuSender.connect({ ...hostPort(ln.validators[0].tpuQuic), identity: id });
      try {
        expect(s.stats().retriesReceived).toBe(1);
        expect(await s.sendAll(payloads(20, k))).toEqual(Array(20).fill('sent'));
      } finally {
        await s.close();
      }
    }
    await until(() => l.counters.transactions - before.transactions === 60, 5_000);
    expect(l.counters.retriesSent - before.retriesSent).toBe(3);
    expect(l.counters.connections - before.connections).toBe(3);
    // The Agave validator sends none.
    const agave = await QuicClientConnection.connect({ ...hostPort(ln.validators[1].tpuQuic), identity: id });
    expect(agave.retried).toBe(false);
    agave.close();
    expect(ln.listeners[1].counters.retriesSent).toBe(0);
  });

  it('takes no 0-RTT: the handshake completes before the first stream, and stream credit is never short', async () => {
    const c = await QuicClientConnection.open({ ...hostPort(ln.validators[0].tpuQuic), identity: id });
    // Before the handshake nothing can be written (no early data offered or accepted).
    expect(c.tryWrite(new Uint8Array(100).fill(1))).toBe('no-credit');
    await c.established;
    // Stream credit: Firedancer grants 2^60 uni streams (the model 2^40) where an Agave unstaked peer gets 128.
    expect(c.peerStreamsLeft()).toBeGreaterThanOrEqual(2 ** 40 - 1);
    const agave = await QuicClientConnection.connect({ ...hostPort(ln.validators[1].tpuQuic), identity: id });
    expect(agave.peerStreamsLeft()).toBeLessThanOrEqual(128);
    agave.close();
    // A burst never meets no-credit ('no-room' is the client's own congestion window), and what was written arrives.
    const before = ln.listeners[0].counters.transactions;
    let refused = 0;
    let written = 0;
    for (const tx of payloads(500, 9)) {
      const r = c.tryWrite(tx);
      if (r === 'no-credit') refused++;
      else if (r === 'written') written++;
    }
    expect(refused).toBe(0);
    expect(written).toBeGreaterThan(0);
    await until(() => ln.listeners[0].counters.transactions - before === written, 10_000);
    c.close();
  });

  it(`closes an idle connection after its idle timeout (${IDLE_MS} ms here)`, async () => {
    const c = await QuicClientConnection.connect({ ...hostPort(ln.validators[0].tpuQuic), identity: id, keepAliveMs: null });
    const t0 = performance.now();
    await c.closed;
    const ms = performance.now() - t0;
    expect(ms).toBeGreaterThan(IDLE_MS * 0.8);
    expect(ms).toBeLessThan(IDLE_MS * 4);
  });

  it('closes an idle connection after 10 s by default (Firedancer\'s idle_timeout_millis)', async () => {
    const l = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: ln.validators[0].identity, kind: 'firedancer', onTransaction: () => {} });
    await l.start();
    try {
      const c = await QuicClientConnection.connect({ ...l.address(), identity: id, keepAliveMs: null });
      const t0 = performance.now();
      await c.closed;
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThan(9_000);
      expect(ms).toBeLessThan(13_000);
    } finally {
      await l.stop();
    }
  }, 20_000);

  it('the Retry costs a new connection one more round trip (25 ms one way: ~50 ms more than Agave)', async () => {
    const mk = (kind: 'agave' | 'firedancer'): TpuListener =>
      new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: ln.validators[0].identity, kind, oneWayDelayMs: 25, onTransaction: () => {} });
    const f = mk('firedancer');
    const a = mk('agave');
    await f.start();
    await a.start();
    try {
      const hs = async (l: TpuListener): Promise<number> => {
        const c = await QuicClientConnection.connect({ ...l.address(), identity: id });
        const ms = c.stats().handshakeMs;
        c.close();
        return ms;
      };
      const fdMs = Math.min(await hs(f), await hs(f));
      const agaveMs = Math.min(await hs(a), await hs(a));
      console.log(`handshake at 25 ms one way: firedancer ${fdMs.toFixed(1)} ms, agave ${agaveMs.toFixed(1)} ms`);
      expect(fdMs - agaveMs).toBeGreaterThan(40);
    } finally {
      await f.stop();
      await a.stop();
    }
  });

  it('takes one transaction per datagram on its TPU-UDP port', async () => {
    const udp = ln.udpListeners[0]!;
    expect(ln.udpListeners[1]).toBeNull();
    const { host, port } = hostPort(ln.validators[0].tpu!);
    const sock = dgram.createSocket('udp4');
    try {
      for (const tx of payloads(5, 7)) sock.send(tx, port, host);
      await until(() => udp.counters.transactions === 5, 5_000);
      expect(udp.counters.invalid).toBe(0);
    } finally {
      sock.close();
    }
  });
});
