// Receipts with reasons (issue #26 item 4) for real, part 3 (parts 1 and 2: not-landed-reasons*.test.ts): a leader
// that is down gives timed_out; an RPC endpoint answering every sendTransaction with a JSON-RPC error gives
// route_failed with the error. Read back from the receipt and from /metrics.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';

const TRACK_MS = 3_000;
let down: RelayHandle;

function config(localnet: Record<string, unknown>, direct: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    localnet: { validators: 1, slotMs: 200, ...localnet },
    routes: { direct: { enabled: true, ...direct }, rpc: { timeoutMs: 8_000 } },
    receipts: { pollMs: 100, trackForMs: TRACK_MS },
    // Reading every receipt of a burst at once: a read budget to match.
    keys: [{ key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 10_000, burst: 10_000 }, readLimit: { perSecond: 10_000, burst: 10_000 } }],
    retries: { defaultMaxRetries: 0 },
  };
}

/** Transfers from a funded payer; `blockhash` given = one that never existed. */
async function transfers(r: RelayHandle, n: number, bogusBlockhash = false): Promise<string[]> {
  const ln = new Connection(embeddedLocalnetUrl(r), 'confirmed');
  const payer = Keypair.generate();
  const sig = await ln.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  await waitFor('airdrop', () => ln.getSignatureStatuses([sig]), (s) => s.value[0] !== null, 10_000);
  const blockhash = bogusBlockhash ? Keypair.generate().publicKey.toBase58() : (await ln.getLatestBlockhash('confirmed')).blockhash;
  return Array.from({ length: n }, (_, i) => {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 1e9 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
    );
    tx.sign(payer);
    return tx.serialize().toString('base64');
  });
}

async function submit(r: RelayHandle, tx: string, routes: string[]): Promise<string> {
  const res = await fetch(`${r.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx, routes, maxRetries: 0 }),
  });
  const json = (await res.json()) as { signature?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.signature!;
}

interface Receipt {
  status: string;
  routes: Record<string, { outcome: string }>;
  reason: { code: string; sent: boolean; route: string | null; closeCode: number | null; closeReason: string | null; detail: string | null } | null;
}

async function receiptOf(r: RelayHandle, signature: string): Promise<Receipt> {
  return (await (await fetch(`${r.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': TEST_KEY } })).json()) as Receipt;
}

async function concluded(r: RelayHandle, signature: string): Promise<Receipt> {
  return waitFor(
    `receipt ${signature} concluded`,
    () => receiptOf(r, signature),
    (x) => x.status === 'not_landed' || x.status === 'landed',
    TRACK_MS + 10_000,
  );
}

async function reasonCount(r: RelayHandle, reason: string, sent: boolean): Promise<number> {
  const text = await (await fetch(`${r.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('slotrelay_receipts_not_landed_reason_total{') && l.includes(`reason="${reason}"`) && l.includes(`sent="${sent}"`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

async function directReady(r: RelayHandle): Promise<void> {
  await waitFor('direct deliverable', async () => (await (await fetch(`${r.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes?.direct?.deliverable === true, 20_000);
}

/** An RPC endpoint that answers every sendTransaction with a JSON-RPC error (a node that is behind). */
let behind: Server;
let behindUrl = '';

beforeAll(async () => {
  behind = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'Node is behind by 42 slots' } }));
    });
  });
  await new Promise<void>((resolve) => behind.listen(0, '127.0.0.1', resolve));
  behindUrl = `http://127.0.0.1:${(behind.address() as AddressInfo).port}/`;
  // Tower: the one validator is down, and under Alpenglow a cluster whose only leader is down makes no block at all
  // (every slot skipped, no slot notifications: the relay would have no fresh leader data). Tower keeps slots coming.
  const d = config({ links: [{ down: true }], consensus: 'tower' }, { connectTimeoutMs: 500, staleAfterMs: 5_000 });
  down = await startRelay({ ...d, routes: { ...(d.routes as object), rpc: { endpoints: [behindUrl], timeoutMs: 8_000 } } });
  await directReady(down);
}, 45_000);

afterAll(async () => {
  await down?.stop('SIGTERM');
  behind?.close();
});

describe('why a transaction did not land: receipts and /metrics (down, route error)', () => {
  it('an RPC endpoint answering an error: route_failed with the error; with a down leader too: the timeout outranks the route error', async () => {
    const [a, b] = await transfers(down, 2);
    const viaRpc = await submit(down, a, ['rpc']);
    const both = await submit(down, b, ['direct', 'rpc']);
    const r2 = await concluded(down, viaRpc);
    expect(r2).toMatchObject({ status: 'not_landed', routes: { rpc: { outcome: 'failed' } }, reason: { code: 'route_failed', sent: false, route: 'rpc', detail: 'JSON-RPC -32005' } });
    // Neither route sent it: the most telling failure is named (timed_out ranks above a route's error).
    const r3 = await concluded(down, both);
    expect(r3).toMatchObject({ status: 'not_landed', reason: { code: 'timed_out', sent: false, route: 'direct' } });
    expect(await reasonCount(down, 'route_failed', false)).toBe(1);
  }, 30_000);

  it('a leader that is down: timed_out', async () => {
    const [a] = await transfers(down, 1);
    const sig = await submit(down, a, ['direct']);
    const r = await concluded(down, sig);
    expect(r).toMatchObject({ status: 'not_landed', routes: { direct: { outcome: 'dropped:no_connection' } }, reason: { code: 'timed_out', sent: false, route: 'direct' } });
    expect(await reasonCount(down, 'timed_out', false)).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
