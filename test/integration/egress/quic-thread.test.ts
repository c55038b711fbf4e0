// One QUIC thread per relay process (issue #12 part 1), checked on real relay processes:
// - with the default configuration (the QUIC ingress listening too, on an ephemeral port here) the quiche binding is
//   mapped once, from the shipped library: /proc/<pid>/maps of the relay shows one quiche file and no copy of it under
//   a temp directory (no native code written at run time);
// - with rings.workers: 4 and the direct route, the localnet's TPU listeners count exactly one connection from the
//   relay each (their own counters), however many egress workers run: every QUIC connection is the QUIC thread's; and
//   the same with rings.quicThreads: 3, each leader's connection in the thread that owns it (docs/quic-sharding.md).
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { quicheMappings, shippedQuiche } from '../../helpers/quiche-maps.js';
import { quicThreadOf } from '../../../src/egress/quic/shard-owner.js';
import { quicheThreadCopyPath } from '../../../src/quic/quiche-binary.js';
import { realpathSync } from 'node:fs';
import { ensureDist } from './dist-build.js';

const shipped = shippedQuiche;

describe('one QUIC thread: the quiche binding in the relay process', () => {
  let relay: RelayHandle | undefined;
  afterAll(async () => {
    await relay?.stop();
  });

  it('default config: one quiche mapping, the shipped library, and no copy under a temp directory', async () => {
    ensureDist();
    // The default configuration: the embedded localnet (a child process of its own), telemetry with its probe, and the
    // QUIC ingress (default port 4433; ephemeral here so that test files can run at once).
    relay = await startRelay({ relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 } });
    expect(relay.quic).not.toBeNull();
    const pid = relay.child.pid!;
    // The QUIC thread loads the binding for its first probe round, once the telemetry knows the schedule and nodes.
    const seen = await waitFor('quiche mapped by the relay', () => quicheMappings(pid), (m) => m.files.length > 0, 20_000);
    // Stay a little: a later load by another thread (a copy) would show up now.
    await new Promise((r) => setTimeout(r, 1_500));
    const m = quicheMappings(pid);
    expect(seen.files).toEqual([shipped]);
    expect(m.files).toEqual([shipped]);
    expect(m.tempFiles).toEqual([]);
    expect(relay.logs.some((l) => l.includes('SLOTRELAY_QUICHE_SHARED'))).toBe(false);
  }, 60_000);
});

// rings.workers 4 with one QUIC thread, and rings.quicThreads 3 (docs/quic-sharding.md): the same guarantee.
describe.each([
  { name: 'rings.workers 4, one QUIC thread', workers: 4, quicThreads: 1 },
  { name: 'rings.quicThreads 3', workers: 1, quicThreads: 3 },
])('one connection per leader per process: $name', ({ workers, quicThreads }) => {
  const SLOT_MS = 200;
  let ln: Localnet;
  let conn: Connection;
  let relay: RelayHandle;
  const payer = Keypair.generate();

  beforeAll(async () => {
    ensureDist();
    ln = await startLocalnet({ slotMs: SLOT_MS, validators: 4, stakes: [1n, 1n, 1n, 1n].map((x) => x * 100_000_000_000n), graceMs: SLOT_MS / 2 });
    conn = new Connection(ln.rpcUrl, 'confirmed');
    await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
    relay = await startRelay({
      upstream: { rpcUrl: ln.rpcUrl },
      rings: { workers, slotsPerRing: 256, quicThreads },
      // Only the egress connects to the listeners (the probe would add handshakes of its own).
      telemetry: { probe: { enabled: false } },
      routes: { direct: { enabled: true, fanout: 'next-leaders', leaders: 3, lookahead: 4, slotPollMs: 50 } },
    });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await ln?.stop();
  });

  it('every transaction lands; every leader\'s listener sees exactly one connection from the relay', async () => {
    const { blockhash } = await conn.getLatestBlockhash('processed');
    const signatures: string[] = [];
    // 40 transactions over ~2 s (10 slots, several leader windows), each to the current leader and the next 3.
    for (let i = 0; i < 40; i++) {
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 + i }),
      );
      tx.sign(payer);
      const r = await fetch(`${relay.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['direct'] }),
      });
      expect(r.status).toBe(200);
      signatures.push(((await r.json()) as { signature: string }).signature);
      await new Promise((res) => setTimeout(res, 50));
    }
    await waitFor('every transaction landed', () => signatures.filter((s) => ln.bank.record(s) !== undefined).length, (n) => n === signatures.length, 10_000);
    const counts = ln.listeners.map((l) => l.counters);
    // Every validator was a leader (or a next leader) in those slots: each got transactions, over one connection.
    for (const c of counts) expect(c.transactions).toBeGreaterThan(0);
    expect(counts.map((c) => c.connections)).toEqual([1, 1, 1, 1]);
    expect(counts.map((c) => c.activeConnections)).toEqual([1, 1, 1, 1]);
    // The QUIC ring carried them (it is labelled), and the gauges say 4 active connections, none queued (written once a
    // second by each QUIC thread, summed).
    const metrics = await waitFor(
      'the QUIC threads\' gauges',
      async () => (await fetch(`${relay.rpcUrl}/metrics`)).text(),
      (t) => t.includes('slotrelay_quic_connections{state="active"} 4'),
      5_000,
    );
    expect(metrics).toContain('slotrelay_ring_depth{ring="quic"} 0');
    expect(metrics).toContain('slotrelay_quic_queued_transactions 0');
    expect(metrics).toContain('slotrelay_quic_connection_events_total{event="created"} 4');
    // Counted once per transaction, whichever thread wrote it to which leader.
    expect(metrics).toContain('slotrelay_egress_outcomes_total{route="direct",outcome="sent"} 40');
    // Each leader's connection is in the thread that owns its address.
    const expected = new Array<number>(quicThreads).fill(0);
    for (const l of ln.listeners) expected[quicThreadOf(`127.0.0.1:${l.address().port}`, quicThreads)]++;
    for (let t = 0; t < quicThreads; t++) expect(metrics).toContain(`slotrelay_quic_thread_connections{thread="${t}"} ${expected[t]}`);
    // Same process: the shipped binding mapped once, plus each extra thread's build copy; nothing copied at run time.
    const m = quicheMappings(relay.child.pid!);
    expect(m.files.sort()).toEqual([shipped, ...Array.from({ length: quicThreads - 1 }, (_, k) => realpathSync(quicheThreadCopyPath(k + 1)))].sort());
    expect(m.tempFiles).toEqual([]);
  }, 60_000);
});
