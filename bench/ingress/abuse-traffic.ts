// The abuse of issue #47 item 6, as traffic (bench and test process; cold): garbage datagrams (every kind of junk the
// live fuzzer sends, scripts/fuzz/quic-wire.ts), abusive handshakes (unknown-key certificates, no certificate,
// handshakes abandoned half-way, connects closed at once) and random streams on a few authorized connections (random
// bytes, uni and bidi, some oversized, some left without FIN, some reset). Used by bench/ingress/abuse-memory.bench.ts
// and test/integration/ingress/quic-ingress-memory.test.ts.
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { IngressClient } from '../../src/client/quic/ingress-client.js';
import type { IdentityCertificate } from '../../src/quic/identity-certificate.js';
import { junkDatagram } from '../../scripts/fuzz/quic-wire.js';
import { caseRng } from '../../scripts/fuzz/rng.js';

/** Garbage is sent GARBAGE_PER_TICK datagrams per TICK_MS (~3,000/s: the QUIC thread reads most of it on 2 cores). */
const TICK_MS = 10;
const GARBAGE_PER_TICK = 30;
const HANDSHAKE_CONCURRENCY = 24;
/** Authorized connections that carry the random streams, and streams in flight on each. */
const STREAM_CONNECTIONS = 4;
const STREAMS_IN_FLIGHT = 48;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `n` junk datagrams from 4 sockets, ~3,000/s. */
export async function garbage(port: number, n: number, seed: number): Promise<void> {
  const rng = caseRng(seed, 1);
  const socks = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      s.on('message', () => undefined);
      return s;
    }),
  );
  for (let i = 0; i < n; ) {
    for (let k = 0; k < GARBAGE_PER_TICK && i < n; k++, i++) socks[i & 3].send(junkDatagram(rng, i).bytes, port, '127.0.0.1');
    await sleep(TICK_MS);
  }
  await sleep(200);
  for (const s of socks) s.close();
}

export type HandshakeKind = 'unknown key' | 'no certificate' | 'abandoned' | 'closed at once';
const HANDSHAKE_KINDS: readonly HandshakeKind[] = ['unknown key', 'no certificate', 'abandoned', 'closed at once'];

/** `n` abusive handshakes, the four kinds in turn, 24 at a time. */
export async function handshakes(port: number, n: number, good: IdentityCertificate, strangers: readonly IdentityCertificate[]): Promise<Record<HandshakeKind, number>> {
  const done: Record<HandshakeKind, number> = { 'unknown key': 0, 'no certificate': 0, abandoned: 0, 'closed at once': 0 };
  let next = 0;
  const one = async (i: number): Promise<void> => {
    const kind = HANDSHAKE_KINDS[i % HANDSHAKE_KINDS.length];
    const base = { host: '127.0.0.1', port, idleTimeoutMs: 5_000 };
    if (kind === 'abandoned') {
      // The client gives up after its first flight: the relay holds a half-open connection until its handshake timeout.
      const r = await IngressClient.tryConnect({ ...base, certificate: good, connectTimeoutMs: 1 });
      if (r instanceof IngressClient) r.close();
    } else {
      const cert = kind === 'unknown key' ? strangers[i % strangers.length] : kind === 'no certificate' ? null : good;
      const r = await IngressClient.tryConnect({ ...base, certificate: cert, connectTimeoutMs: 3_000 });
      if (r instanceof IngressClient) {
        r.close();
        await r.closed;
      }
    }
    done[kind]++;
  };
  await Promise.all(
    Array.from({ length: HANDSHAKE_CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await one(i);
    }),
  );
  return done;
}

/** Random streams: random bytes on uni and bidi streams, some oversized, some never finished. */
export async function streams(port: number, n: number, good: IdentityCertificate): Promise<number> {
  const perConn = Math.ceil(n / STREAM_CONNECTIONS);
  let opened = 0;
  await Promise.all(
    Array.from({ length: STREAM_CONNECTIONS }, async () => {
      const c = await IngressClient.connect({ host: '127.0.0.1', port, certificate: good, connectTimeoutMs: 5_000, keepAliveMs: 1_000 });
      let next = 0;
      await Promise.all(
        Array.from({ length: STREAMS_IN_FLIGHT }, async () => {
          for (let i = next++; i < perConn; i = next++) {
            const r = Math.random();
            const size = r < 0.05 ? 9_000 : Math.floor(Math.random() * 1_300);
            const bytes = randomBytes(size);
            opened++;
            if (r < 0.45) await c.sendUni(bytes);
            else if (r < 0.9) await c.requestRaw(bytes);
            else if (r < 0.95) await c.sendUni(bytes, false); // never finished: refused at streamTimeoutMs
            else await c.abandon(bytes, 7, (i & 1) === 1); // reset by the client
          }
        }),
      );
      c.close();
      await c.closed;
    }),
  );
  return opened;
}
