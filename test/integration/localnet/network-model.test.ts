// The localnet's network model (docs/localnet.md "Network model") with real QUIC clients (src/quic) and real HTTP:
// 200 ms slots, transaction drops and datagram loss on one listener, a down validator, Agave's unstaked QoS
// (connection cap, connection rate, stream throttle) against a staked peer, the RPC node's one-way delay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { makeValidators } from '../../../src/localnet/validators.js';
import { QuicClientConnection, createIdentityCertificate, createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { TpuSender } from '../../helpers/tpu-sender.js';
import { holdsWithin, until } from '../../helpers/wait-for.js';

let ln: Localnet;

function hostPort(tpuQuic: string): { host: string; port: number } {
  const [host, port] = tpuQuic.split(':');
  return { host, port: Number(port) };
}

function connect(tpuQuic: string, identity: IdentityCertificate, connectTimeoutMs = 5_000): Promise<QuicClientConnection> {
  return QuicClientConnection.connect({ ...hostPort(tpuQuic), identity, connectTimeoutMs });
}

/** A connection through the relay's egress connection worker, for bursts larger than the stream credit. */
function sender(tpuQuic: string, identity: IdentityCertificate): Promise<TpuSender> {
  return TpuSender.connect({ ...hostPort(tpuQuic), identity });
}

/** Distinct non-empty payloads: the listener counts whole streams; the gate drops them (not_leader / undecodable). */
function payloads(n: number, tag: number): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => {
    const b = new Uint8Array(200);
    b[0] = tag;
    b[1] = i & 0xff;
    b[2] = i >> 8;
    return b;
  });
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<{ ms: number; body: { result?: unknown } }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown };
  return { ms: performance.now() - t0, body };
}

// Validator 1 drops 30% of the transactions it receives, validator 2 loses 10% of incoming datagrams, validator 3 is
// down; the QoS is on (a test-sized connection rate so the cap can be reached without the rate limit first).
const TX_DROP_PCT = 30;
const LOSS_PCT = 10;
const RPC_DELAY_MS = 60;

beforeAll(async () => {
  ln = await startLocalnet({
    // Tower: under Alpenglow the down validator's slots are skipped and getSlot(processed) stays on the last block,
    // which the slot-rate test below does not expect (skips have their own test: alpenglow.test.ts).
    consensus: 'tower',
    slotMs: 200,
    validators: 4,
    links: [{}, { txDropPct: TX_DROP_PCT }, { lossPct: LOSS_PCT }, { down: true }],
    qos: { enabled: true, maxConnectionsPerIpPerMinute: 20 },
    rpc: { oneWayDelayMs: RPC_DELAY_MS },
  });
});

afterAll(async () => {
  await ln?.stop();
});

describe('localnet network model', () => {
  it('200 ms slots: about 5 slots per second, on the clock and over RPC', async () => {
    const t0 = performance.now();
    const s0 = ln.clock.current;
    const r0 = (await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'processed' }])).body.result as number;
    await new Promise((r) => setTimeout(r, 2_000));
    const t1 = performance.now();
    const s1 = ln.clock.current;
    const r1 = (await rpc(ln.rpcUrl, 'getSlot', [{ commitment: 'processed' }])).body.result as number;
    // Both reads cross the same RPC delay, so they are t1 - t0 apart: (t1 - t0) / 200 slots, +-1 for the boundaries.
    const expected = (t1 - t0) / 200;
    expect(t1 - t0).toBeLessThan(2_600); // a box too busy to measure slot time would fail here, not below
    expect(Math.abs(s1 - s0 - expected)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(r1 - r0 - expected)).toBeLessThanOrEqual(1.5);
    expect((s1 - s0) / ((t1 - t0) / 1000)).toBeGreaterThan(4);
    expect((s1 - s0) / ((t1 - t0) / 1000)).toBeLessThan(6);
    expect(ln.slotMs).toBe(200);
  });

  it('a listener with txDropPct 30 loses about 30% of the transactions a real QUIC client sends it', async () => {
    const N = 1_000;
    const l = ln.listeners[1];
    const c0 = ln.landings.countersOf(ln.validators[1].identity).received;
    const t0 = l.counters.transactions;
    const d0 = l.counters.transactionsDropped;
    // A staked identity (validator 0's): not throttled, so the burst arrives at once.
    const [v0] = makeValidators(4, 'slotrelay');
    const conn = await sender(ln.validators[1].tpuQuic, await createIdentityCertificate(v0.identity.secretKey));
    expect(new Set(await conn.sendAll(payloads(N, 1)))).toEqual(new Set(['sent']));
    await until(() => l.counters.transactions - t0 === N, 10_000);
    await conn.close();
    const dropped = l.counters.transactionsDropped - d0;
    const reachedGate = ln.landings.countersOf(ln.validators[1].identity).received - c0;
    // Binomial(1000, 0.3): mean 300, sd 14.5; +-5 sd.
    expect(dropped).toBeGreaterThanOrEqual(228);
    expect(dropped).toBeLessThanOrEqual(372);
    expect(reachedGate).toBe(N - dropped);
  });

  it('a listener with lossPct 10 drops about 10% of incoming datagrams, and QUIC still delivers every transaction', async () => {
    const N = 600;
    const l = ln.listeners[2];
    const t0 = l.counters.transactions;
    const [v0] = makeValidators(4, 'slotrelay');
    const identity = await createIdentityCertificate(v0.identity.secretKey);
    let conn: TpuSender | null = null;
    for (let attempt = 0; conn === null && attempt < 3; attempt++) conn = await sender(ln.validators[2].tpuQuic, identity).catch(() => null);
    expect(conn).not.toBeNull();
    const outcomes = conn!.sendAll(payloads(N, 2));
    await until(() => l.counters.transactions - t0 === N, 20_000);
    expect(new Set(await outcomes)).toEqual(new Set(['sent']));
    await conn!.close();
    const arrived = l.counters.datagramsReceived;
    const lost = l.counters.datagramsDropped / arrived;
    expect(arrived).toBeGreaterThan(100);
    expect(lost).toBeGreaterThan(0.04);
    expect(lost).toBeLessThan(0.18);
    expect(l.counters.transactionsDropped).toBe(0);
  });

  it('a down validator never answers a handshake and never lands anything sent only to it', async () => {
    const down = ln.validators[3];
    expect(down.down).toBe(true);
    await expect(connect(down.tpuQuic, await createRandomIdentityCertificate(), 1_500)).rejects.toThrow();
    const l = ln.listeners[3];
    expect(l.counters.connections).toBe(0);
    expect(l.counters.transactions).toBe(0);
    expect(ln.landings.countersOf(down.identity).received).toBe(0);
    expect(l.counters.datagramsDropped).toBeGreaterThan(0);
  });

  it('an unstaked peer: the 9th connection is closed with code 4 (too_many); beyond the connection rate, code 2', async () => {
    const target = ln.validators[0].tpuQuic;
    const identity = await createRandomIdentityCertificate();
    const open: QuicClientConnection[] = [];
    for (let i = 0; i < 8; i++) open.push(await connect(target, identity));
    await holdsWithin(() => ln.qos[0].counters.unstakedConnections === 8, 2_000);
    const ninth = await QuicClientConnection.open({ ...hostPort(target), identity });
    const info = await ninth.closed;
    expect(info).toMatchObject({ by: 'peer', isApp: true, code: 4, reason: 'too_many' });
    for (const c of open) expect(c.currentState).toBe('established');
    // Close all: 9 of the 20 per-minute connections are used; 11 more open and close, the next one is refused.
    for (const c of open) c.close();
    await holdsWithin(() => ln.qos[0].counters.unstakedConnections === 0, 2_000);
    for (let i = 0; i < 11; i++) {
      // Close only once the listener has admitted it (its handshake ends one flight after the client's).
      const accepted = ln.listeners[0].counters.connections;
      const c = await connect(target, identity);
      await until(() => ln.listeners[0].counters.connections > accepted, 2_000);
      c.close();
    }
    const refused = await QuicClientConnection.open({ ...hostPort(target), identity });
    expect(await refused.closed).toMatchObject({ by: 'peer', isApp: true, code: 2, reason: 'disallowed' });
    expect(ln.qos[0].counters.rateLimited).toBeGreaterThanOrEqual(1);
    expect(ln.qos[0].counters.tooMany).toBeGreaterThanOrEqual(1);
  });

  it('an unstaked peer is throttled to 20 streams per 100 ms (~200 tx/s); a staked peer is not', async () => {
    const N = 200;
    const l = ln.listeners[0];
    const timeToReceive = async (identity: IdentityCertificate, tag: number): Promise<number> => {
      const conn = await sender(ln.validators[0].tpuQuic, identity);
      const t0 = l.counters.transactions;
      const start = performance.now();
      const outcomes = conn.sendAll(payloads(N, tag));
      await until(() => l.counters.transactions - t0 >= N, 10_000);
      const ms = performance.now() - start;
      expect(new Set(await outcomes)).toEqual(new Set(['sent']));
      await conn.close();
      return ms;
    };
    const throttled0 = ln.qos[0].counters.throttled;
    const unstakedMs = await timeToReceive(await createRandomIdentityCertificate(), 3);
    const throttled1 = ln.qos[0].counters.throttled;
    const [, v1] = makeValidators(4, 'slotrelay');
    const stakedMs = await timeToReceive(await createIdentityCertificate(v1.identity.secretKey), 4);
    // 200 streams at 20 per 100 ms window: the first window's 20 at once, then 9 more windows.
    expect(unstakedMs).toBeGreaterThanOrEqual(850);
    expect(unstakedMs).toBeLessThan(3_000);
    expect(throttled1).toBeGreaterThan(throttled0);
    expect(ln.qos[0].counters.throttled).toBe(throttled1);
    expect(stakedMs).toBeLessThan(unstakedMs / 2);
  });

  it('the RPC node one-way delay shows in a measured round trip (2 x 60 ms), against a localnet without it', async () => {
    const plain = await startLocalnet({ slotMs: 200, validators: 1 });
    try {
      const delayed: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < 5; i++) {
        delayed.push((await rpc(ln.rpcUrl, 'getHealth')).ms);
        direct.push((await rpc(plain.rpcUrl, 'getHealth')).ms);
      }
      delayed.sort((a, b) => a - b);
      direct.sort((a, b) => a - b);
      expect(delayed[0]).toBeGreaterThanOrEqual(2 * RPC_DELAY_MS - 1);
      expect(delayed[2]).toBeLessThan(2 * RPC_DELAY_MS + 100);
      expect(direct[2]).toBeLessThan(RPC_DELAY_MS);
    } finally {
      await plain.stop();
    }
  });
});
