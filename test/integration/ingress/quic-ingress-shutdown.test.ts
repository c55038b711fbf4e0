// The QUIC ingress when the relay stops (docs/quic-ingress.md "When the relay stops"): SIGTERM to a real relay process
// (dist/src/cli.js start, the listener in its one QUIC thread) closes every open ingress connection with
// CONNECTION_CLOSE application code 4 (shutting_down) before the process exits, so clients learn why at once instead
// of waiting out their idle timeout. Three connections, each answered once before the stop, all must see code 4 within
// a few seconds of the signal (their idle timeouts are 20-30 s), and the relay still exits 0.
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { CONNECTION_CODE } from '../../../src/ingress/codes.js';
import type { QuicCloseInfo } from '../../../src/quic/close-info.js';
import { createIdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const CLIENT_IDLE_MS = 20_000;
let relay: RelayHandle;

beforeAll(async () => {
  relay = await startRelay({
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { idleTimeoutMs: 30_000 } },
    routes: { discard: true },
    keys: [{ key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 100_000, burst: 100_000 } }],
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
});

describe('QUIC ingress on SIGTERM', () => {
  it('closes every connection with application code 4 (shutting_down) before the relay exits', async () => {
    const port = relay.quic!.port;
    const cert = await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY);
    const clients = await Promise.all(
      Array.from({ length: 3 }, () => IngressClient.connect({ host: '127.0.0.1', port, certificate: cert, idleTimeoutMs: CLIENT_IDLE_MS })),
    );
    // Each connection is in use (authenticated and answered) before the stop.
    for (const c of clients) expect(await c.request({ transaction: legacyTransfer().bytes })).toMatchObject({ kind: 'answer', answer: { accepted: true } });
    const closedAt: number[] = [];
    const infos = clients.map((c, i) => c.closed.then((info: QuicCloseInfo) => ((closedAt[i] = Date.now()), info)));
    const t0 = Date.now();
    const exited = relay.stop('SIGTERM');
    const all = await Promise.race([
      Promise.all(infos),
      new Promise<null>((r) => setTimeout(() => r(null), 8_000)),
    ]);
    expect(all, 'every client saw its connection end within 8 s of SIGTERM').not.toBeNull();
    for (const info of all!) {
      expect(info).toMatchObject({ by: 'peer', isApp: true, code: CONNECTION_CODE.shuttingDown, reason: 'shutting_down', wasEstablished: true });
    }
    // Promptly: far below any idle timeout (the relay's 30 s, the clients' 20 s).
    for (const at of closedAt) expect(at - t0).toBeLessThan(5_000);
    expect(await exited).toBe(0);
  }, 30_000);
});
