// The client library's QUIC transport against real relays (dist/src/cli.js start, QUIC ingress on an ephemeral UDP
// port) on the embedded localnet, imported only through the package entries (`slotrelay/client` and
// `slotrelay/client/quic` -> package.json exports -> dist/), as a user would: acknowledged submits of web3.js and kit
// transactions land (getSignatureStatuses), fire-and-forget lands, 500 concurrent submits are all answered,
// `slotrelay send --transport quic` lands, and the typed errors: unknown key (connection code 1), rate limited
// (retryAfterMs), oversized (answer and stream code 17), no listener (timeout). The relay restart: quic-reconnect.test.ts.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import * as kit from '@solana/kit';
import type { Blockhash } from '@solana/kit';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RelaySubmitError, TransportUnavailableError, type SubmitResult } from 'slotrelay/client';
import { CONNECTION_CODE, QuicTransport, STREAM_CODE, quicTransport } from 'slotrelay/client/quic';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { landed } from '../../helpers/landed.js';

const TIGHT_KEY = '0c3d5e7f-1a2b-4c6d-8e9f-a0b1c2d3e4f5';
const UNKNOWN_KEY = 'deadbeef-dead-4bee-8eef-deadbeefdead';

let relay: RelayHandle;
let localnet: Connection;
let localnetUrl: string;
let payer: Keypair;
let client: RelayClient;
let transport: QuicTransport;

function quicAddress(r: RelayHandle): string {
  return `127.0.0.1:${r.quic!.port}`;
}

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 },
    // 500 submits at once: the egress ring must hold them (full = overloaded, as over HTTP).
    rings: { workers: 1, slotsPerRing: 2_048 },
    keys: [...defaultKeys(), { key: TIGHT_KEY, name: 'tight', rateLimit: { perSecond: 0.01, burst: 1 } }],
  });
  localnetUrl = embeddedLocalnetUrl(relay);
  localnet = new Connection(localnetUrl, 'confirmed');
  payer = await fundedPayer(localnet, 20);
  client = new RelayClient({
    url: relay.relayUrl,
    apiKey: TEST_KEY,
    transport: (ctx) => (transport = new QuicTransport(ctx, { address: quicAddress(relay) })),
  });
}, 90_000);

afterAll(async () => {
  await client?.close();
  await relay?.stop('SIGTERM');
});

let recent: { blockhash: string; at: number } | null = null;
async function blockhash(): Promise<string> {
  if (recent === null || performance.now() - recent.at > 5_000) recent = { blockhash: (await localnet.getLatestBlockhash('confirmed')).blockhash, at: performance.now() };
  return recent.blockhash;
}

/** A funded transfer to a fresh account (above the rent-exempt minimum), signed. */
async function transfer(): Promise<Transaction> {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: await blockhash(), lastValidBlockHeight: 1_000_000 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + Math.floor(Math.random() * 100_000) }),
  );
  tx.sign(payer);
  return tx;
}

async function rejection(p: Promise<unknown>): Promise<RelaySubmitError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RelaySubmitError);
  return e as RelaySubmitError;
}

describe('submit over QUIC', () => {
  it('an acknowledged submit (bidi stream) lands, with the answer of /v1/submit; the connection is reused', async () => {
    const tx = await transfer();
    const a = await client.submit(tx, { routes: ['rpc'], maxRetries: 2 });
    expect(a).toEqual({ accepted: true, signature: bs58.encode(tx.signature!), routes: ['rpc'] });
    await landed(localnet, a.signature);
    const b = await client.submit(await transfer());
    expect(b.accepted).toBe(true);
    await landed(localnet, b.signature);
    expect(client.transport).toBe('quic');
    expect(transport.connections).toBe(1);
  });

  it('a kit transaction (wire bytes from @solana/kit) lands over QUIC', async () => {
    const signer = await kit.createKeyPairSignerFromBytes(payer.secretKey);
    const real = kit.pipe(kit.createTransactionMessage({ version: 0 }), (m) => kit.setTransactionMessageFeePayerSigner(signer, m));
    const bh = (await blockhash()) as Blockhash;
    const withLifetime = kit.setTransactionMessageLifetimeUsingBlockhash({ blockhash: bh, lastValidBlockHeight: 1_000_000n }, real);
    const msg = kit.appendTransactionMessageInstructions(
      [
        {
          programAddress: kit.address('11111111111111111111111111111111'),
          accounts: [
            { address: signer.address, role: 3 /* writable signer */ },
            { address: kit.address(Keypair.generate().publicKey.toBase58()), role: 1 /* writable */ },
          ],
          data: new Uint8Array([2, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0]),
        },
      ],
      withLifetime,
    );
    const tx = await kit.signTransactionMessageWithSigners(msg);
    const a = await client.submit(tx);
    expect(a.accepted).toBe(true);
    await landed(localnet, a.signature);
  });

  it('fire-and-forget (uni stream) resolves once written, unacknowledged, and lands', async () => {
    const tx = await transfer();
    const r = await client.submit(tx, { fireAndForget: true });
    expect(r).toEqual({ accepted: 'unacknowledged', signature: bs58.encode(tx.signature!) });
    await landed(localnet, r.signature);
    // Nothing can travel with a uni stream; HTTP has none.
    await expect(client.submit(tx, { fireAndForget: true, routes: ['rpc'] })).rejects.toThrow(TypeError);
    const http = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY });
    await expect(http.submit(tx, { fireAndForget: true })).rejects.toThrow(/QUIC/);
  });

  it('500 concurrent submits on one connection are all answered (accepted)', async () => {
    const txs = Array.from({ length: 500 }, () => legacyTransfer(1_000 + Math.floor(Math.random() * 1e6)).bytes);
    const t0 = performance.now();
    const out = await Promise.allSettled(txs.map((tx) => client.submit(tx)));
    const ms = performance.now() - t0;
    const accepted = out.filter((o) => o.status === 'fulfilled' && (o.value as SubmitResult).accepted === true).length;
    const failed = out.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => (o.reason as RelaySubmitError).reason);
    expect({ accepted, failed }).toEqual({ accepted: 500, failed: [] });
    expect(transport.connections).toBe(1);
    console.log(`500 concurrent QUIC submits answered in ${ms.toFixed(0)} ms`);
  }, 30_000);

  it('slotrelay send --transport quic lands (and --fire-and-forget prints the unacknowledged result)', async () => {
    const run = async (args: string[]): Promise<{ code: number | null; stdout: string }> => {
      const child = spawn(process.execPath, ['dist/src/cli.js', 'send', ...args, '--relay', relay.relayUrl, '--transport', 'quic', '--quic', quicAddress(relay)], {
        env: { PATH: process.env.PATH, SLOTRELAY_KEY: TEST_KEY },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout })));
    };
    const tx = await transfer();
    const a = await run([tx.serialize().toString('base64')]);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual({ accepted: true, signature: bs58.encode(tx.signature!), routes: ['rpc'] });
    await landed(localnet, bs58.encode(tx.signature!));
    const f = await transfer();
    const b = await run([f.serialize().toString('base64'), '--fire-and-forget']);
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual({ accepted: 'unacknowledged', signature: bs58.encode(f.signature!) });
    await landed(localnet, bs58.encode(f.signature!));
  });

  it("transport: 'quic' as a string says what to import", () => {
    expect(() => new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, transport: 'quic' })).toThrow(TransportUnavailableError);
    expect(() => new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, transport: 'quic' })).toThrow(/slotrelay\/client\/quic/);
    expect(() => quicTransport({ address: 'nope' })).toThrow(TypeError);
  });
});

describe('typed errors over QUIC', () => {
  it('an unknown key: the relay closes with connection code 1 -> RelaySubmitError unauthorized, fast', async () => {
    const c = new RelayClient({ url: relay.relayUrl, apiKey: UNKNOWN_KEY, timeoutMs: 5_000, transport: quicTransport({ address: quicAddress(relay) }) });
    const t0 = performance.now();
    const e = await rejection(c.submit(legacyTransfer().bytes));
    expect(e).toMatchObject({ reason: 'unauthorized', quicConnectionCode: CONNECTION_CODE.unauthorized });
    expect(e.retryable).toBe(false);
    expect(e.message).not.toContain(UNKNOWN_KEY);
    expect(performance.now() - t0).toBeLessThan(4_000);
    await c.close();
  });

  it('rate limited: the answer carries retryAfterMs (the same budget as HTTP)', async () => {
    const c = new RelayClient({ url: relay.relayUrl, apiKey: TIGHT_KEY, transport: quicTransport({ address: quicAddress(relay) }) });
    expect((await c.submit(legacyTransfer().bytes)).accepted).toBe(true);
    const e = await rejection(c.submit(legacyTransfer().bytes));
    expect(e).toMatchObject({ reason: 'rate_limited', code: -32005 });
    expect(e.retryAfterMs).toBeGreaterThan(0);
    expect(e.retryable).toBe(true);
    await c.close();
  });

  it('oversized: over 1232 bytes answers tx_too_large_decoded; over the stream limit the stream is refused (code 17)', async () => {
    const big = new Uint8Array(1_400);
    big.set(legacyTransfer().bytes, 0);
    const e = await rejection(client.submit(big));
    expect(e.reason).toMatch(/^tx_too_large/);
    expect(e.code).toBe(-32602);
    const huge = new Uint8Array(8_000);
    huge.set(legacyTransfer().bytes, 0);
    const h = await rejection(client.submit(huge));
    expect(h).toMatchObject({ reason: 'tx_too_large_decoded', quicStreamCode: STREAM_CODE.tooLarge });
    // The connection stays open: the next submit goes through on it.
    expect((await client.submit(legacyTransfer().bytes)).accepted).toBe(true);
    expect(transport.connections).toBe(1);
  });

  it('no relay at the address: timeout within timeoutMs', async () => {
    const port = await freeUdpPort();
    const c = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, timeoutMs: 800, transport: quicTransport({ address: `127.0.0.1:${port}`, connectTimeoutMs: 300 }) });
    const e = await rejection(c.submit(legacyTransfer().bytes));
    expect(e.reason).toBe('timeout');
    await c.close();
    // Closed: no more submits, no more dialling.
    expect((await rejection(c.submit(legacyTransfer().bytes))).reason).toBe('aborted');
  });
});

async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
