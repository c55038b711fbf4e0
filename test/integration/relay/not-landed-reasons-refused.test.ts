// Receipts with reasons (issue #26 item 4) for real, part 2 (part 1: not-landed-reasons.test.ts, part 3:
// not-landed-reasons-down.test.ts): a leader that refuses unstaked connections (flow-control QoS with no unstaked
// connections: Agave's code 2 "disallowed") gives connection_refused with the code; read back from the receipt and
// from /metrics.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';

const TRACK_MS = 3_000;
let refusing: RelayHandle;

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

beforeAll(async () => {
  refusing = await startRelay(config({ qos: { enabled: true, model: 'flow-control', maxUnstakedConnections: 0 } }));
  await directReady(refusing);
}, 45_000);

afterAll(async () => {
  await refusing?.stop('SIGTERM');
});

describe('why a transaction did not land: receipts and /metrics (refused)', () => {
  it('refused by the leader with Agave\'s code 2: connection_refused', async () => {
    // The leader closes each connection right after its handshake; a transaction the relay wrote in that instant was
    // sent (honestly: sent, not landed). A few spaced out meet the connection refused.
    // Once every direct send fails, the relay's health monitor marks the route failing and refuses further
    // submissions at the door (503 routes_unavailable: that answer is their reason, and they get no receipt).
    const txs = await transfers(refusing, 5);
    const sigs: string[] = [];
    for (const t of txs) {
      const res = await fetch(`${refusing.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ transaction: t, routes: ['direct'], maxRetries: 0 }),
      });
      const json = (await res.json()) as { signature?: string; error?: { reason?: string; data?: { routes?: Record<string, string> } } };
      if (res.status === 200) sigs.push(json.signature!);
      else expect(json.error, JSON.stringify(json)).toMatchObject({ reason: 'routes_unavailable', data: { routes: { direct: 'route_failing' } } });
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(sigs.length).toBeGreaterThanOrEqual(1);
    const all = await Promise.all(sigs.map((s) => concluded(refusing, s)));
    for (const x of all) expect(['connection_refused', 'not_landed']).toContain(x.reason?.code);
    const r1 = all.find((x) => x.reason?.code === 'connection_refused');
    expect(r1).toMatchObject({
      status: 'not_landed',
      routes: { direct: { outcome: 'dropped:no_connection' } },
      reason: { code: 'connection_refused', sent: false, route: 'direct', closeCode: 2, closeReason: 'disallowed' },
    });
    expect(await reasonCount(refusing, 'connection_refused', false)).toBe(all.filter((x) => x.reason?.code === 'connection_refused').length);
  }, 30_000);

});
