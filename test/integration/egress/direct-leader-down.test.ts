// A leader that is down does not block the others, and is retried: the direct route (in process, real QUIC to real
// TPU listeners, real signed transactions) with a fixed two-leader schedule and the next-leaders policy. Leader A's
// listener stops: every transaction is still `sent` (through B) without waiting; A's connection goes to `retrying`
// with backoff; when A's listener comes back on the same port, A's connection is re-established and receives again.
import { Keypair } from '@solana/web3.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { DirectRoute } from '../../../src/egress/quic/direct-route.js';
import { QuicEgress } from '../../../src/egress/quic/quic-egress.js';
import { outcomeOf, type EgressOutcome, type TxView } from '../../../src/egress/contract/route.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { createLogger } from '../../../src/log/logger.js';
import type { LeaderInfo, LeaderSource } from '../../../src/telemetry/leader-source.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';

const log = createLogger('silent', 'test');
const relayKey = Keypair.generate();
const got = { A: [] as (string | null)[], B: [] as (string | null)[] };
let A: TpuListener;
let B: TpuListener;
let aPort = 0;
let route: DirectRoute;
let quic: QuicEgress;

function listener(name: 'A' | 'B', port = 0): TpuListener {
  return new TpuListener({ host: '127.0.0.1', port, validatorIdentity: name, onTransaction: (_tx, info) => got[name].push(info.senderIdentity) });
}

function view(bytes: Buffer, i: number): TxView {
  return { bytes, sab: new SharedArrayBuffer(0), byteOffset: 0, length: bytes.length, signatureOffset: 1, keyId: 0, maxRetries: -1, traceId: `t${i}`, receivedAtMs: Date.now() };
}

const stateOf = (port: number): string | undefined => quic.cache!.report().find((r) => r.target === `127.0.0.1:${port}`)?.state;

beforeAll(async () => {
  A = listener('A');
  B = listener('B');
  await A.start();
  await B.start();
  aPort = A.address().port;
  const infoA: LeaderInfo = { identity: 'A', tpuQuic: `127.0.0.1:${aPort}`, stake: 1 };
  const infoB: LeaderInfo = { identity: 'B', tpuQuic: `127.0.0.1:${B.address().port}`, stake: 1 };
  // Slot 0: A leads window 0, B window 1, then A and B alternate.
  const source: LeaderSource = { currentSlot: () => 0, leaderAt: (s) => (Math.floor(s / 4) % 2 === 0 ? infoA : infoB), ageMs: () => 0 };
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-down-'));
  const keypairPath = join(dir, 'id.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(relayKey.secretKey)));
  const config = configSchema.parse({
    identity: { keypairPath },
    routes: { direct: { enabled: true, fanout: 'next-leaders', leaders: 1, lookahead: 2, retryMinMs: 50, retryMaxMs: 200, connectTimeoutMs: 500, maxIdleTimeoutMs: 1_000, keepAliveMs: 300 } },
  });
  quic = new QuicEgress(config, log);
  route = new DirectRoute(quic, source, config.routes.direct);
  await quic.ready;
  await until(() => stateOf(aPort) === 'active' && stateOf(B.address().port) === 'active', 3_000);
});

/** The route's outcome, read when it answers (a synchronous answer is the route's reused result). */
async function sendOutcome(t: TxView): Promise<EgressOutcome> {
  const r = route.send(t);
  return outcomeOf(r instanceof Promise ? await r : r);
}

afterAll(async () => {
  await route?.close();
  await A?.stop();
  await B?.stop();
});

describe('direct route with a leader down', () => {
  it('sends to both leaders while both are up, with the configured identity', async () => {
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => sendOutcome(view(legacyTransfer(1000 + i).bytes, i))));
    expect(outs.every((o) => o === 'sent')).toBe(true);
    await until(() => got.A.length === 20 && got.B.length === 20, 3_000);
    expect(new Set([...got.A, ...got.B])).toEqual(new Set([relayKey.publicKey.toBase58()]));
  });

  it('a stopped leader does not hold up the other; it is retried and receives again once back', async () => {
    // The listener's CONNECTION_CLOSE may not leave before its socket closes: the client then learns from its idle
    // timeout (1 s here, like Jet's 10 s in production), which is what a crashed validator looks like anyway.
    await A.stop();
    await until(() => stateOf(aPort) === 'retrying' || stateOf(aPort) === 'connecting', 3_000);
    const bBefore = got.B.length;
    const txs = Array.from({ length: 50 }, (_, i) => view(legacyTransfer(2000 + i).bytes, 100 + i));
    const t0 = performance.now();
    const outs: EgressOutcome[] = await Promise.all(txs.map((t) => sendOutcome(t)));
    expect(performance.now() - t0).toBeLessThan(1_000); // nothing waited for A (its connect timeout is 500 ms, idle 1 s)
    expect(outs.every((o) => o === 'sent')).toBe(true);
    await until(() => got.B.length === bBefore + 50, 3_000);
    // A's reconnect attempts fail (each within its 500 ms connect timeout): wait for the first to end, not a fixed time.
    const failuresOfA = (): number => quic.cache!.report().find((r) => r.target === `127.0.0.1:${aPort}`)?.connectFailures ?? 0;
    await until(() => failuresOfA() > 0, 3_000);

    // A comes back on the same port: the backoff loop reconnects, and A receives again.
    A = listener('A', aPort);
    await A.start();
    await until(() => stateOf(aPort) === 'active', 3_000);
    const aBefore = got.A.length;
    const outs2 = await Promise.all(Array.from({ length: 10 }, (_, i) => sendOutcome(view(legacyTransfer(3000 + i).bytes, 200 + i))));
    expect(outs2.every((o) => o === 'sent')).toBe(true);
    await until(() => got.A.length === aBefore + 10, 3_000);
  });

  it('reports handshake time and send latency per connection', () => {
    for (const r of quic.cache!.report()) {
      expect(r.handshakeMs).toBeGreaterThan(0);
      expect(r.sendLatencyCount).toBeGreaterThan(0);
      expect(r.sendLatencyP99Us).toBeGreaterThan(0);
    }
  });
});
