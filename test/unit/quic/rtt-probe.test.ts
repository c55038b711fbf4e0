// The idle RTT probe of the QUIC client loop (src/quic/client-driver.ts, issue #47 item 9): an egress connection that
// writes nothing is still measured (rttSample() moves on, at the path's round trip), only the probe's own reply
// times it (a stray datagram from the peer, e.g. one the network duplicated, does not), and without the option the
// loop sends nothing of its own. Real quiche on both ends, over UDP paths with a real one-way delay.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { QuicServerEndpoint } from '../../../src/localnet/tpu-endpoint.js';
import { UdpDelayForwarder } from '../../../src/localnet/udp-delay-forwarder.js';

const ONE_WAY_MS = 20;
const PROBE_MS = 300;
let cert: IdentityCertificate;
let server: QuicServerEndpoint;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A path with ONE_WAY_MS each way that, when the client speaks after 200 ms of silence (the idle probe), at once hands
 * it a copy of the server's last datagram, as a network that duplicates packets would: quiche drops the copy.
 */
async function duplicatingPath(serverPort: number): Promise<{ port: number; strays: () => number; close: () => void }> {
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  let client: AddressInfo | null = null;
  let lastFromServer: Buffer | null = null;
  let lastFromClientAt = 0;
  let strays = 0;
  // Datagrams still on their ONE_WAY_MS delay when the path closes are dropped (a send on a closed socket throws).
  let closed = false;
  front.on('message', (msg, rinfo) => {
    client = rinfo;
    const now = performance.now();
    if (lastFromServer !== null && lastFromClientAt > 0 && now - lastFromClientAt > 200) {
      strays++;
      front.send(lastFromServer, rinfo.port, rinfo.address);
    }
    lastFromClientAt = now;
    setTimeout(() => closed || back.send(msg, serverPort, '127.0.0.1'), ONE_WAY_MS);
  });
  back.on('message', (msg) => {
    lastFromServer = msg;
    const to = client;
    if (to !== null) setTimeout(() => closed || front.send(msg, to.port, to.address), ONE_WAY_MS);
  });
  await new Promise<void>((r) => front.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => back.bind(0, '127.0.0.1', r));
  return {
    port: (front.address() as AddressInfo).port,
    strays: () => strays,
    close: () => {
      closed = true;
      front.close();
      back.close();
    },
  };
}

beforeAll(async () => {
  cert = await createRandomIdentityCertificate();
  server = await QuicServerEndpoint.listen({
    host: '127.0.0.1',
    port: 0,
    certificate: await createRandomIdentityCertificate(),
    maxConcurrentUniStreams: 4,
    onTransaction: () => undefined,
  });
});
afterAll(() => server.close());

describe('the idle RTT probe', () => {
  it('measures an idle connection every rttProbeMs at the path round trip; without it nothing is sent', async () => {
    const path = new UdpDelayForwarder('127.0.0.1', '127.0.0.1', server.address().port, ONE_WAY_MS);
    const port = Number((await path.listen()).split(':')[1]);
    const probing = await QuicClientConnection.connect({ host: '127.0.0.1', port, identity: cert, rttProbeMs: PROBE_MS });
    const silent = await QuicClientConnection.connect({ host: '127.0.0.1', port, identity: cert });
    try {
      await sleep(150); // the handshake's last ACKs
      const first = probing.rttSample()!;
      const silentFirst = silent.rttSample()!;
      const silentSent = silent.stats().datagramsSent;
      const seen = new Set<number>();
      for (let i = 0; i < 6; i++) {
        await sleep(PROBE_MS / 2);
        const s = probing.rttSample()!;
        if (s.atUnixMs !== first.atUnixMs) {
          seen.add(s.atUnixMs);
          expect(s.rttMs).toBeGreaterThanOrEqual(2 * ONE_WAY_MS);
          expect(s.rttMs).toBeLessThan(2 * ONE_WAY_MS + 30);
        }
      }
      // ~3 probes in 900 ms, each a new measurement with its own time.
      expect(seen.size).toBeGreaterThanOrEqual(2);
      // No probe: nothing sent, and the sample is still the handshake's, with the handshake's time.
      expect(silent.stats().datagramsSent).toBe(silentSent);
      expect(silent.rttSample()).toEqual(silentFirst);
    } finally {
      probing.close(0, 'done');
      silent.close(0, 'done');
      path.close();
    }
  });

  it('a stray datagram from the peer right after the PING is not taken for its reply', async () => {
    const path = await duplicatingPath(server.address().port);
    const c = await QuicClientConnection.connect({ host: '127.0.0.1', port: path.port, identity: cert, rttProbeMs: PROBE_MS });
    try {
      const first = c.rttSample()!;
      let s = first;
      for (const deadline = Date.now() + 3_000; s.atUnixMs === first.atUnixMs || path.strays() === 0; s = c.rttSample()!) {
        if (Date.now() > deadline) throw new Error(`no probe measured (${path.strays()} strays)`);
        await sleep(50);
      }
      await sleep(2 * PROBE_MS); // a few more probes, each with its stray
      s = c.rttSample()!;
      expect(path.strays()).toBeGreaterThanOrEqual(2);
      expect(s.rttMs).toBeGreaterThanOrEqual(2 * ONE_WAY_MS);
      expect(s.rttMs).toBeLessThan(2 * ONE_WAY_MS + 30);
    } finally {
      c.close(0, 'done');
      path.close();
    }
  });
});
