// The one QUIC client loop (src/quic/client-driver.ts) as both clients on it show it: the egress connection to a TPU
// and the library's ingress client end the same way when nobody answers (ICMP port unreachable at once, a silent
// peer at the connect timeout) with the same error, and both keep an idle connection alive with PINGs when asked.
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuicClientConnection, createRandomIdentityCertificate, type IdentityCertificate, type QuicCloseInfo } from '../../../src/quic/index.js';
import { QuicServerEndpoint } from '../../../src/localnet/tpu-endpoint.js';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { freeUdpPort } from '../../helpers/free-port.js';

type Dial = (port: number, connectTimeoutMs: number) => Promise<QuicCloseInfo>;

let cert: IdentityCertificate;

const clients: Record<string, Dial> = {
  'egress connection (QuicClientConnection)': async (port, connectTimeoutMs) => {
    const c = await QuicClientConnection.open({ host: '127.0.0.1', port, identity: cert, connectTimeoutMs });
    await expect(c.established).rejects.toThrow(`QUIC connect to 127.0.0.1:${port} failed`);
    return c.closed;
  },
  'ingress client (IngressClient)': async (port, connectTimeoutMs) => {
    const r = await IngressClient.tryConnect({ host: '127.0.0.1', port, certificate: cert, connectTimeoutMs });
    if (r instanceof IngressClient) throw new Error('connected to nobody');
    return r;
  },
};

describe('the QUIC client loop shared by both clients', () => {
  beforeAll(async () => {
    cert = await createRandomIdentityCertificate();
  });

  for (const [name, dial] of Object.entries(clients)) {
    it(`${name}: a port nobody listens on ends 'unreachable' at once, not at the connect timeout`, async () => {
      const port = await freeUdpPort();
      const t0 = performance.now();
      const info = await dial(port, 5_000);
      expect(info.by).toBe('unreachable');
      expect(info.wasEstablished).toBe(false);
      expect(performance.now() - t0).toBeLessThan(4_000);
    });

    it(`${name}: a peer that never answers ends 'handshake-timeout' at the connect timeout`, async () => {
      const silent = dgram.createSocket('udp4');
      await new Promise<void>((res) => silent.bind(0, '127.0.0.1', res));
      let datagrams = 0;
      silent.on('message', () => datagrams++);
      try {
        const t0 = performance.now();
        const info = await dial(silent.address().port, 300);
        expect(info.by).toBe('handshake-timeout');
        expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
        expect(datagrams).toBeGreaterThan(0); // the Initial went out
      } finally {
        silent.close();
      }
    });
  }

  describe('keep-alive', () => {
    let server: QuicServerEndpoint;
    beforeAll(async () => {
      server = await QuicServerEndpoint.listen({
        host: '127.0.0.1',
        port: 0,
        certificate: await createRandomIdentityCertificate(),
        maxConcurrentUniStreams: 4,
        onTransaction: () => undefined,
      });
    });
    afterAll(() => server.close());

    it('an idle egress connection PINGs every keepAliveMs and hears the ACKs; without it, it stays silent', async () => {
      const port = server.address().port;
      const pinging = await QuicClientConnection.connect({ host: '127.0.0.1', port, identity: cert, keepAliveMs: 100 });
      const silent = await QuicClientConnection.connect({ host: '127.0.0.1', port, identity: cert, keepAliveMs: 60_000 });
      try {
        await new Promise((res) => setTimeout(res, 150)); // the handshake's last ACKs go out first
        const a0 = pinging.stats().datagramsSent;
        const b0 = silent.stats().datagramsSent;
        await new Promise((res) => setTimeout(res, 650));
        // ~6 PINGs in 650 ms at 100 ms (fewer on a busy box: each is due 100 ms after the last check)
        expect(pinging.stats().datagramsSent - a0).toBeGreaterThanOrEqual(3);
        expect(pinging.stats().datagramsReceived).toBeGreaterThan(2);
        expect(silent.stats().datagramsSent - b0).toBe(0);
      } finally {
        pinging.close();
        silent.close();
      }
    });
  });
});
