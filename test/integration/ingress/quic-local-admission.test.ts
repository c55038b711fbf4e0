// Local admission (relayHost.quic.localAdmission, docs/quic-ingress.md "Local admission"): a real relay (dist/src/cli.js
// start) on its embedded localnet, our QUIC client over loopback. A key whose default route is `direct` is admitted and
// sent in the QUIC thread (slotrelay_quic_ingress_local_admitted_total counts it) and lands; its receipt
// (GET /v1/transactions/{signature}) has the same fields and route outcome as one submitted over HTTP, and the per-key
// and egress counters count both alike; HTTP and QUIC still draw from one submission budget (the existing test's
// sequence, on a key the QUIC thread admits itself); a key with a mixed route set (rpc + direct) keeps the front's
// path (not admitted locally) and reaches the egress worker's rpc route. The QUIC-thread restart: quic-local-replay.test.ts.
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngressClient } from '../../../src/client/quic/ingress-client.js';
import { createIdentityCertificate, type IdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

const TIGHT_KEY = '0c3d5e7f-1a2b-4c6d-8e9f-a0b1c2d3e4f5';
const MIXED_KEY = '7d2e9a41-5c3b-4f8e-9a1d-2b6c8e0f4a7d';

let relay: RelayHandle;
let localnet: Connection;
let payer: Keypair;
let keyCert: IdentityCertificate;

beforeAll(async () => {
  relay = await startRelay({
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { localAdmission: true } },
    routes: { direct: { enabled: true } },
    receipts: { pollMs: 100 },
    keys: [
      { key: TEST_KEY, name: 'direct-bot', rateLimit: { perSecond: 10_000, burst: 10_000 }, defaultRoutes: ['direct'] },
      { key: TIGHT_KEY, name: 'tight-bot', rateLimit: { perSecond: 0.01, burst: 4 }, defaultRoutes: ['direct'] },
      { key: MIXED_KEY, name: 'mixed-bot', rateLimit: { perSecond: 10_000, burst: 10_000 }, defaultRoutes: ['rpc', 'direct'] },
    ],
  });
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(localnet, 5);
  keyCert = await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY);
}, 90_000);

afterAll(async () => {
  await relay?.stop();
});

async function transfer(): Promise<{ bytes: Buffer; base64: string; signature: string }> {
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + Math.floor(Math.random() * 1_000) }),
  );
  tx.sign(payer);
  const bytes = tx.serialize();
  return { bytes, base64: bytes.toString('base64'), signature: bs58.encode(tx.signature!) };
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const localAdmitted = (): Promise<number> => metric('slotrelay_quic_ingress_local_admitted_total', '');

interface Receipt {
  readonly status: string;
  readonly routes: Record<string, { outcome: string } & Record<string, unknown>>;
  readonly [k: string]: unknown;
}

async function landedReceipt(signature: string, key = TEST_KEY): Promise<Receipt> {
  return waitFor(
    `the receipt of ${signature} says landed`,
    async () => {
      const res = await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': key } });
      return res.status === 200 ? ((await res.json()) as Receipt) : null;
    },
    (r) => r !== null && r.status === 'landed' && r.routes.direct?.outcome === 'sent',
    20_000,
    100,
  ) as Promise<Receipt>;
}

/** A receipt's shape: its field names, each route's field names, without values that differ per transaction. */
function shape(r: Receipt): { fields: string[]; routes: Record<string, string[]> } {
  return { fields: Object.keys(r).sort(), routes: Object.fromEntries(Object.entries(r.routes).map(([k, v]) => [k, Object.keys(v).sort()])) };
}

describe('QUIC local admission', () => {
  it('a direct-route key: uni and bidi streams are admitted in the QUIC thread, land, and get receipts like HTTP', async () => {
    const before = await localAdmitted();
    const acceptedBefore = await metric('slotrelay_key_transactions_accepted_total', '{key_name="direct-bot"}');
    const c = await IngressClient.connect({ host: '127.0.0.1', port: relay.quic!.port, certificate: keyCert });
    const overHttp = await transfer();
    const res = await fetch(`${relay.relayUrl}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ transaction: overHttp.base64 }),
    });
    expect(res.status).toBe(200);
    const overBidi = await transfer();
    const answer = await c.request({ transaction: overBidi.bytes });
    expect(answer).toEqual({ kind: 'answer', answer: { accepted: true, signature: overBidi.signature, routes: ['direct'] } });
    const overUni = await transfer();
    expect((await c.sendUni(overUni.bytes)).kind).toBe('written');
    await waitFor('both streams admitted locally', localAdmitted, (n) => n === before + 2, 5_000, 20);
    const [h, b, u] = await Promise.all([landedReceipt(overHttp.signature), landedReceipt(overBidi.signature), landedReceipt(overUni.signature)]);
    // The same fields, the same route outcome, whichever path accepted it.
    expect(shape(b)).toEqual(shape(h));
    expect(shape(u)).toEqual(shape(h));
    expect(Object.keys(b.routes)).toEqual(['direct']);
    expect(b.routes.direct.outcome).toBe(h.routes.direct.outcome);
    // Counted per key like the HTTP one (the front files the QUIC thread's note off the path).
    await waitFor('per-key acceptances', () => metric('slotrelay_key_transactions_accepted_total', '{key_name="direct-bot"}'), (n) => n === acceptedBefore + 3, 5_000, 20);
    c.close();
  });

  it('HTTP and QUIC draw from one submission budget (the QUIC side admitted in the QUIC thread)', async () => {
    // burst 4, refill one per 100 s: two over HTTP, two over QUIC, then both transports are refused.
    const before = await localAdmitted();
    const cert = await createIdentityCertificate(Keypair.generate().secretKey, TIGHT_KEY);
    const c = await IngressClient.connect({ host: '127.0.0.1', port: relay.quic!.port, certificate: cert });
    const http = (): Promise<Response> =>
      fetch(`${relay.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TIGHT_KEY },
        body: JSON.stringify({ transaction: legacyTransfer().base64 }),
      });
    expect((await http()).status).toBe(200);
    expect(await c.request({ transaction: legacyTransfer().bytes })).toMatchObject({ kind: 'answer', answer: { accepted: true } });
    expect((await http()).status).toBe(200);
    expect(await c.request({ transaction: legacyTransfer().bytes })).toMatchObject({ kind: 'answer', answer: { accepted: true } });
    const limited = await c.request({ transaction: legacyTransfer().bytes });
    expect(limited).toMatchObject({ kind: 'answer', answer: { accepted: false, error: { reason: 'rate_limited', code: -32005 } } });
    expect((limited as unknown as { answer: { error: { data: { retryAfterMs: number } } } }).answer.error.data.retryAfterMs).toBeGreaterThan(0);
    expect((await http()).status).toBe(429);
    c.close();
    expect(await localAdmitted()).toBe(before + 2);
    await waitFor('per-key acceptances', () => metric('slotrelay_key_transactions_accepted_total', '{key_name="tight-bot"}'), (n) => n === 4, 5_000, 20);
    expect(await metric('slotrelay_key_rate_limited_total', '{key_name="tight-bot"}')).toBe(2);
  });

  it('a mixed route set (rpc + direct) keeps the front path: answered, not admitted locally, rpc reached by the egress worker', async () => {
    const before = await localAdmitted();
    const rpcSent = await metric('slotrelay_egress_outcomes_total', '{route="rpc",outcome="sent"}');
    const cert = await createIdentityCertificate(Keypair.generate().secretKey, MIXED_KEY);
    const c = await IngressClient.connect({ host: '127.0.0.1', port: relay.quic!.port, certificate: cert });
    const tx = await transfer();
    expect(await c.request({ transaction: tx.bytes })).toEqual({ kind: 'answer', answer: { accepted: true, signature: tx.signature, routes: ['rpc', 'direct'] } });
    // A request naming its routes goes to the front too, even for a direct-only key's routes.
    const named = await transfer();
    expect(await c.request({ transaction: named.bytes, routes: ['direct'] })).toMatchObject({ kind: 'answer', answer: { accepted: true, routes: ['direct'] } });
    c.close();
    await waitFor('rpc route sent it', () => metric('slotrelay_egress_outcomes_total', '{route="rpc",outcome="sent"}'), (n) => n >= rpcSent + 1, 10_000, 50);
    await landedReceipt(tx.signature, MIXED_KEY);
    expect(await localAdmitted()).toBe(before);
  });

  it('answers every stream of a burst of bidi requests exactly once, with its own signature (local and via the front)', async () => {
    // Answers of locally admitted streams leave with the flush at the end of the QUIC thread's event-loop turn, many in
    // one datagram (issue #45 item 2): each stream still gets its own answer, and the counts add up to the burst.
    const c = await IngressClient.connect({ host: '127.0.0.1', port: relay.quic!.port, certificate: keyCert });
    const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
    const txs = Array.from({ length: 200 }, () => {
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
      );
      tx.sign(payer);
      return { bytes: tx.serialize(), signature: bs58.encode(tx.signature!) };
    });
    const accepted0 = await metric('slotrelay_quic_ingress_streams_total', '{outcome="accepted"}');
    const local0 = await localAdmitted();
    // Odd ones name maxRetries: local admission leaves those to the front, which answers them on the reply ring.
    const results = await Promise.all(txs.map((tx, i) => c.request(i % 2 === 0 ? { transaction: tx.bytes } : { transaction: tx.bytes, maxRetries: 0 })));
    results.forEach((r, i) => expect(r).toMatchObject({ kind: 'answer', answer: { accepted: true, signature: txs[i].signature } }));
    expect(await metric('slotrelay_quic_ingress_streams_total', '{outcome="accepted"}')).toBe(accepted0 + 200);
    const local = (await localAdmitted()) - local0;
    expect(local).toBeGreaterThanOrEqual(1);
    expect(local).toBeLessThanOrEqual(100);
    await landedReceipt(txs[0].signature);
    c.close();
  });
});
