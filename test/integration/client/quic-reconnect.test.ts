// The QUIC transport across a relay restart: a relay (dist/src/cli.js start) on the upstream of another relay's
// embedded localnet, its QUIC ingress on a fixed UDP port, is stopped (SIGTERM) and started again on the same port
// while a client submits in a loop through `slotrelay/client/quic`. The client redials (a second connection), what
// failed during the restart failed with a typed reason, and every submit answered accepted landed on the localnet
// (getSignatureStatuses), which outlives the restarted relay.
import { createSocket } from 'node:dgram';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, type RelaySubmitError } from 'slotrelay/client';
import { QuicTransport } from 'slotrelay/client/quic';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { landed } from '../../helpers/landed.js';

let chain: RelayHandle;
let localnet: Connection;
let localnetUrl: string;
let payer: Keypair;

beforeAll(async () => {
  ensureClientBuilt();
  chain = await startRelay({}); // only for its embedded localnet
  localnetUrl = embeddedLocalnetUrl(chain);
  localnet = new Connection(localnetUrl, 'confirmed');
  payer = await fundedPayer(localnet, 5);
}, 90_000);

afterAll(async () => {
  await chain?.stop('SIGTERM');
});

let recent: { blockhash: string; at: number } | null = null;
async function transfer(): Promise<Transaction> {
  if (recent === null || performance.now() - recent.at > 5_000) recent = { blockhash: (await localnet.getLatestBlockhash('confirmed')).blockhash, at: performance.now() };
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: recent.blockhash, lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + Math.floor(Math.random() * 100_000) }),
  );
  tx.sign(payer);
  return tx;
}

async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('relay restart', () => {
  it('the client redials after the relay restarts mid-stream; every submit answered accepted lands', async () => {
    const quicPort = await freeUdpPort();
    const config = {
      upstream: { rpcUrl: localnetUrl },
      routes: { rpc: { endpoints: [localnetUrl] } },
      relayHost: { host: '127.0.0.1', port: 0, quicPort },
    };
    let second: RelayHandle | null = null;
    const first = await startRelay(config);
    let t!: QuicTransport;
    const c = new RelayClient({
      url: first.relayUrl,
      apiKey: TEST_KEY,
      timeoutMs: 3_000,
      transport: (ctx) => (t = new QuicTransport(ctx, { address: `127.0.0.1:${quicPort}`, reconnect: { minMs: 50, maxMs: 500 } })),
    });
    const accepted: string[] = [];
    const failures: string[] = [];
    let stop = false;
    const sender = (async () => {
      while (!stop) {
        const tx = await transfer();
        try {
          const r = await c.submit(tx);
          accepted.push(r.signature);
        } catch (err) {
          failures.push((err as RelaySubmitError).reason);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      await waitFor('submits before the restart', async () => accepted.length, (n) => n >= 5, 10_000, 50);
      const before = accepted.length;
      await first.stop('SIGTERM');
      second = await startRelay(config);
      await waitFor('submits after the restart', async () => accepted.length, (n) => n >= before + 5, 20_000, 50).catch((e: Error) => {
        throw new Error(`${e.message}; failures ${failures.join(',')}; connections ${t.connections}`);
      });
      stop = true;
      await sender;
      expect(t.connections).toBeGreaterThanOrEqual(2);
      // What failed during the restart failed with a typed reason; nothing answered accepted was lost.
      for (const f of failures) expect(['network_error', 'shutting_down', 'timeout', 'overloaded']).toContain(f);
      for (const sig of accepted) await landed(localnet, sig);
      console.log(`restart: ${accepted.length} accepted (all landed), ${failures.length} failed (${[...new Set(failures)].join(', ')}), ${t.connections} connections`);
    } finally {
      stop = true;
      await sender;
      await c.close();
      await second?.stop('SIGTERM');
      if (first.child.exitCode === null) await first.stop('SIGTERM');
    }
  }, 90_000);
});
