// Several QUIC threads (rings.quicThreads > 1, docs/quic-sharding.md), checked on real relay processes against real
// QUIC listeners:
// - static peers spread over two threads (the listeners are picked so that each thread owns two): when the relay says
//   ready every peer already holds its one connection, every transaction reaches every peer exactly once over that one
//   connection, and the static route's outcome is counted once per transaction (not once per thread), in /metrics
//   and in the relay_stopped line;
// The direct route with three QUIC threads on a 4-validator localnet is in quic-thread.test.ts (one connection per leader).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quicThreadOf } from '../../../src/egress/quic/shard-owner.js';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { quicheMappings, shippedQuiche } from '../../helpers/quiche-maps.js';
import { quicheThreadCopyPath } from '../../../src/quic/quiche-binary.js';
import { mkdtempSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDist } from './dist-build.js';

async function metrics(relay: RelayHandle): Promise<string> {
  return (await fetch(`${relay.rpcUrl}/metrics`)).text();
}

function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('two QUIC threads: static peers spread over both', () => {
  const peers: { l: TpuListener; addr: string; got: Map<string, number> }[] = [];
  let relay: RelayHandle;

  beforeAll(async () => {
    ensureDist();
    // Ephemeral ports: keep listeners until each of the two threads owns two of them (the owner is a hash of the address).
    const spare: TpuListener[] = [];
    const owned = [0, 0];
    for (let i = 0; i < 64 && peers.length < 4; i++) {
      const got = new Map<string, number>();
      const l = new TpuListener({
        host: '127.0.0.1',
        port: 0,
        validatorIdentity: `peer${i}`,
        onTransaction: (tx) => {
          const k = Buffer.from(tx).toString('base64');
          got.set(k, (got.get(k) ?? 0) + 1);
        },
      });
      await l.start();
      const addr = `127.0.0.1:${l.address().port}`;
      const owner = quicThreadOf(addr, 2);
      if (owned[owner] < 2) {
        owned[owner]++;
        peers.push({ l, addr, got });
      } else {
        spare.push(l);
      }
    }
    for (const l of spare) await l.stop();
    expect(owned).toEqual([2, 2]);
    relay = await startRelay({
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      rings: { workers: 1, slotsPerRing: 1024, quicThreads: 2 },
      routes: { direct: { staleAfterMs: 30_000 }, static: { peers: peers.map((p) => p.addr) } },
    });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    for (const p of peers) await p.l.stop();
  });

  it('at relay_ready every peer, whichever thread owns it, holds its connection', async () => {
    for (const p of peers) await waitFor(`${p.addr} connected`, () => p.l.counters.activeConnections, (n) => n === 1, 100, 10);
  });

  it('every transaction reaches every peer once, over one connection each, and is counted once', async () => {
    const N = 300;
    const txs = Array.from({ length: N }, (_, i) => legacyTransfer(7_000 + i));
    for (let i = 0; i < N; i += 20) {
      await Promise.all(
        txs.slice(i, i + 20).map(async (tx) => {
          const r = await fetch(`${relay.relayUrl}/v1/submit`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
            body: JSON.stringify({ transaction: tx.base64, routes: ['static'], maxRetries: 0 }),
          });
          expect(r.status).toBe(200);
        }),
      );
    }
    for (const p of peers) {
      await waitFor(`${p.addr} got all`, () => p.got.size, (n) => n === N, 15_000, 10);
      for (const tx of txs) expect(p.got.get(tx.base64)).toBe(1);
      expect(p.l.counters.connections).toBe(1);
    }
    const text = await waitFor('gauges written', () => metrics(relay), (t) => sample(t, 'slotrelay_quic_connections', 'state="active"') === 4, 5_000);
    // One outcome per transaction for the route, whichever threads wrote it.
    expect(sample(text, 'slotrelay_egress_outcomes_total', 'route="static",outcome="sent"')).toBe(N);
    // Each thread holds the connections of the peers it owns: two each.
    expect(sample(text, 'slotrelay_quic_thread_connections', 'thread="0"')).toBe(2);
    expect(sample(text, 'slotrelay_quic_thread_connections', 'thread="1"')).toBe(2);
    // Each thread's CPU time, read from /proc by its kernel thread id: both worked.
    for (const t of ['0', '1']) expect(sample(text, 'slotrelay_quic_thread_cpu_seconds_total', `thread="${t}"`)).toBeGreaterThan(0);
    // Thread 1's link is a ring of its own in the gauges, drained.
    expect(sample(text, 'slotrelay_ring_depth', 'ring="quic1"')).toBe(0);
    expect(sample(text, 'slotrelay_ring_depth', 'ring="quic"')).toBe(0);
  }, 60_000);

  it('thread 0 maps the shipped quiche library, thread 1 the copy the build wrote for it; nothing copied at run time', () => {
    const m = quicheMappings(relay.child.pid!);
    expect(m.files.sort()).toEqual([shippedQuiche, realpathSync(quicheThreadCopyPath(1))].sort());
    expect(m.tempFiles).toEqual([]);
    expect(relay.logs.some((l) => l.includes('SLOTRELAY_QUICHE_SHARED'))).toBe(false);
  });

  it('stops cleanly: every accepted transaction released once, none undelivered', async () => {
    const code = await relay.stop();
    expect(code).toBe(0);
    const line = relay.logs.find((l) => l.includes('"relay_stopped"'));
    expect(line).toBeDefined();
    const stopped = JSON.parse(line!) as { accepted: number; records: { released: number; undelivered: number }; outcomes: Record<string, Record<string, number>> };
    expect(stopped.accepted).toBe(300);
    expect(stopped.records).toMatchObject({ released: 300, undelivered: 0 });
    expect(stopped.outcomes.static).toEqual({ sent: 300 });
  }, 30_000);
});

describe('QUIC threads without the build\'s copies of the binding', () => {
  it('the relay refuses to start (exit 2) and names the missing copy and the command that makes it', () => {
    ensureDist();
    // Copy 7 is only used with rings.quicThreads 8: hide it for this test (the suite runs one file at a time).
    const copy = quicheThreadCopyPath(7);
    const hidden = `${copy}.hidden`;
    renameSync(copy, hidden);
    try {
      const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-quic-threads-')), 'config.yaml');
      writeFileSync(file, 'rings:\n  quicThreads: 8\nkeys: []\n');
      const r = spawnSync(process.execPath, ['dist/src/cli.js', 'start', '--config', file], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`rings.quicThreads 8 needs the build's per-thread copies of the quiche binding; ${copy} is missing (run \`make build\`)`);
      expect(r.stdout).not.toContain('relay_ready');
    } finally {
      renameSync(hidden, copy);
    }
  });
});
