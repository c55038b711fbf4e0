// Issue #47 item 6: after a burst of abuse on the QUIC ingress, a real relay gives the memory back (docs/quic-ingress.md
// "Memory after abuse"). A bounded run of the abuse mix (bench/ingress/abuse-traffic.ts: junk datagrams, abusive
// handshakes, random streams), then RSS read from /proc must come back within 50 MB of idle within the minute; the
// relay says so in its log (quic_ingress_memory_trimmed). And where the trim could not be built (no C compiler), a
// relay still starts, serves the QUIC ingress, and says that the trim is unavailable. The full three-round
// measurement is bench/ingress/abuse-memory.bench.ts (bench/results/quic-ingress-memory.md).
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { createIdentityCertificate, type IdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { garbage, handshakes, streams } from '../../../bench/ingress/abuse-traffic.js';

/** The bound: RSS within this of idle a minute after the abuse. */
const BOUND_MB = 50;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Math.round(Number(m[1]) / 102.4) / 10;
}

const RELAY_CONFIG = {
  // Queues of 256 slots (default 4,096): the default's two 19.25 MB queues between the QUIC thread and the front are
  // touched by the first 4,096 streams and stay resident for the relay's life (docs/quic-ingress.md "Memory after
  // abuse"); a fixed cost, not a high-water mark, that would take 34 of the 50 MB this test is about.
  relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { queueSlots: 256 } },
  routes: { discard: true },
  keys: [{ key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 100_000, burst: 100_000 } }],
};

describe('QUIC ingress: memory after a burst of abuse', () => {
  let relay: RelayHandle;
  let cert: IdentityCertificate;

  beforeAll(async () => {
    relay = await startRelay(RELAY_CONFIG);
    cert = await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY);
  }, 60_000);
  afterAll(async () => {
    await relay?.stop();
  });

  it('RSS comes back within 50 MB of idle within a minute, and the relay says it gave memory back', async () => {
    const pid = relay.child.pid!;
    const port = relay.quic!.port;
    // Idle as an operator would read it: the relay has served a few streams and settled.
    await streams(port, 64, cert);
    await new Promise((r) => setTimeout(r, 5_000));
    const idle = rssMb(pid);
    const strangers = await Promise.all(Array.from({ length: 4 }, () => createIdentityCertificate(Keypair.generate().secretKey, randomUUID())));
    let peak = idle;
    const peakTimer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 250);
    await Promise.all([garbage(port, 30_000, 47), handshakes(port, 600, cert, strangers), streams(port, 5_000, cert)]);
    clearInterval(peakTimer);
    const end = rssMb(pid);
    // A minute at most: until the relay has said it gave memory back and RSS is within the bound (before the fix the
    // first never came, and RSS stayed +100 MB over idle).
    const trimmedLines = (): string[] => relay.logs.filter((l) => l.includes('"quic_ingress_memory_trimmed"'));
    const after = await waitFor('a trim, then RSS within 50 MB of idle', () => (trimmedLines().length > 0 ? rssMb(pid) : Infinity), (mb) => mb - idle <= BOUND_MB, 60_000, 1_000).catch(() => rssMb(pid));
    console.log(`abuse: RSS idle ${idle} MB, peak ${peak}, end ${end}, after ${after} (+${Math.round((after - idle) * 10) / 10} MB, bound ${BOUND_MB})`);
    expect(after - idle).toBeLessThanOrEqual(BOUND_MB);
    const trimmed = trimmedLines();
    expect(trimmed.length).toBeGreaterThanOrEqual(1);
    const e = JSON.parse(trimmed[0]) as { datagrams: number; rssBeforeMb: number; rssAfterMb: number };
    expect(e.datagrams).toBeGreaterThan(10_000);
    expect(relay.logs.some((l) => l.includes('quic_ingress_memory_trim_unavailable'))).toBe(false);
    // The relay still serves after its trim.
    const c = await IngressClient.connect({ host: '127.0.0.1', port, certificate: cert, connectTimeoutMs: 5_000 });
    expect(await c.request({ transaction: legacyTransfer().bytes })).toMatchObject({ kind: 'answer', answer: { accepted: true } });
    c.close();
  }, 180_000);
});

describe('QUIC ingress without the trim (no C compiler at build time)', () => {
  // A copy of the build without dist/native/malloc-trim: the checkout's root is where the running cli.js finds its
  // package.json (src/native/project-root.ts), so the copy's relay looks for the addon in the copy.
  const root = mkdtempSync(join(tmpdir(), 'slotrelay-no-trim-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('the relay starts, serves the QUIC ingress and says the trim is unavailable', async () => {
    const here = resolve('.');
    cpSync(join(here, 'package.json'), join(root, 'package.json'));
    symlinkSync(join(here, 'node_modules'), join(root, 'node_modules'));
    mkdirSync(join(root, 'dist', 'native'), { recursive: true });
    for (const d of ['src', 'workers']) cpSync(join(here, 'dist', d), join(root, 'dist', d), { recursive: true });
    for (const d of readdirSync(join(here, 'dist', 'native'))) if (d !== 'malloc-trim') symlinkSync(join(here, 'dist', 'native', d), join(root, 'dist', 'native', d));
    const file = join(root, 'config.yaml');
    writeFileSync(file, stringify({ rpcHost: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, rings: { workers: 1, slotsPerRing: 1024 }, log: { level: 'info' }, ...RELAY_CONFIG }));
    const child = spawn(process.execPath, [join(root, 'dist', 'src', 'cli.js'), 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    const lines: string[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
    createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
    try {
      const ready = (await waitFor('relay_ready', () => lines.find((l) => l.includes('"relay_ready"')), undefined, 30_000, 100))!;
      const quic = (JSON.parse(ready) as { listeners: { name: string; port: number }[] }).listeners.find((l) => l.name === 'quic')!;
      const warn = lines.find((l) => l.includes('"quic_ingress_memory_trim_unavailable"'));
      expect(warn).toBeDefined();
      expect(JSON.parse(warn!)).toMatchObject({ level: 40, why: expect.stringContaining('not built') });
      const c = await IngressClient.connect({ host: '127.0.0.1', port: quic.port, certificate: await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY), connectTimeoutMs: 5_000 });
      expect(await c.request({ transaction: legacyTransfer().bytes })).toMatchObject({ kind: 'answer', answer: { accepted: true } });
      c.close();
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
  }, 60_000);
});
