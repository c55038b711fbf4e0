// Landing receipts (issue #13 item 2) against real relays on the embedded localnet: a transaction accepted over HTTP
// gets a receipt that moves from pending to landed with the slot, the leader, slots and ms to land and the route
// that sent first; the direct route records the leaders it aimed at; an on-chain failure shows as landed_failed with
// its error; only the submitting key sees the receipt (another key gets 404, JSON-RPC null); the metrics count it; a
// leader that is down shows in the receipts of what was sent while it led (landed later, by another leader).
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

let relay: RelayHandle;
let localnet: Connection;
const payer = Keypair.generate();

async function transfer(lamports: number): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}

async function submit(r: RelayHandle, tx: string, routes?: string[]): Promise<{ status: number; json: any }> {
  const res = await fetch(`${r.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx, ...(routes ? { routes } : {}), maxRetries: 0 }),
  });
  return { status: res.status, json: await res.json() };
}

async function receipt(r: RelayHandle, signature: string, key: string | null = TEST_KEY): Promise<{ status: number; json: any }> {
  const res = await fetch(`${r.relayUrl}/v1/transactions/${signature}`, { headers: key === null ? {} : { 'x-api-key': key } });
  return { status: res.status, json: await res.json() };
}

function localnetUrl(r: RelayHandle): string {
  const started = r.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x !== null);
  return started!.rpcUrl;
}

beforeAll(async () => {
  // The poll path (its status thread is asserted below): landings by push are landing-push.test.ts's.
  relay = await startRelay({ routes: { direct: { enabled: true } }, receipts: { pollMs: 100, push: false } });
  localnet = new Connection(localnetUrl(relay), 'confirmed');
  const sig = await localnet.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
  // The direct route is offered once the relay has fresh leader data (its health monitor says so within a second).
  await waitFor('direct deliverable', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes.direct.deliverable === true, 15_000);
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('landing receipts', () => {
  it('moves from pending to landed: slot, leader, slots and ms to land, the route that sent first', async () => {
    const accepted = await submit(relay, await transfer(2_000_000), ['rpc']);
    expect(accepted.status).toBe(200);
    const signature = accepted.json.signature as string;
    const first = await receipt(relay, signature);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ signature, requestId: expect.any(String), acceptedAt: expect.any(Number), rebroadcasts: 0 });
    expect(['pending', 'landed']).toContain(first.json.status);
    expect(Object.keys(first.json.routes)).toEqual(['rpc']);

    const landed = await waitFor('landed', () => receipt(relay, signature), (r) => r.json.status === 'landed', 20_000);
    const r = landed.json;
    expect(r.routes.rpc).toMatchObject({ outcome: 'sent', firstSentAt: expect.any(Number), targets: 0, leaderSlot: null });
    expect(r.landed).toMatchObject({ slot: expect.any(Number), err: null, firstRoute: 'rpc', execution: 'executed', executionSource: 'status' });
    expect(r.landed.slotsToLand).toBeGreaterThanOrEqual(0);
    expect(r.landed.msToLand).toBeGreaterThan(0);
    expect(typeof r.landed.leader).toBe('string');
    // The slot it reports is the one the cluster says.
    const status = (await localnet.getSignatureStatuses([signature])).value[0];
    expect(status?.slot).toBe(r.landed.slot);
    expect(r.acceptedSlot).toBeLessThanOrEqual(r.landed.slot);
  });

  it('the direct route records how many leaders it wrote to and which slot it aimed at', async () => {
    const accepted = await submit(relay, await transfer(2_000_000), ['direct']);
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    const landed = await waitFor('landed by direct', () => receipt(relay, accepted.json.signature), (r) => r.json.status === 'landed', 20_000);
    expect(landed.json.routes.direct).toMatchObject({ outcome: 'sent', targets: expect.any(Number), leaderSlot: expect.any(Number) });
    expect(landed.json.routes.direct.targets).toBeGreaterThanOrEqual(1);
    expect(landed.json.landed.firstRoute).toBe('direct');
    // The slot aimed at is the relay's estimate of the cluster's slot when it sent (extrapolated from its leader
    // data); the bank may still be a slot behind it or already past it.
    expect(Math.abs(landed.json.landed.slot - landed.json.routes.direct.leaderSlot)).toBeLessThanOrEqual(4);
  });

  it('an on-chain failure lands as landed_failed with its error', async () => {
    // More than the payer has: fails in execution, still lands (the fee is charged).
    const accepted = await submit(relay, await transfer(50 * LAMPORTS_PER_SOL), ['rpc']);
    expect(accepted.status).toBe(200);
    const failed = await waitFor('landed failed', () => receipt(relay, accepted.json.signature), (r) => r.json.status === 'landed_failed', 20_000);
    expect(failed.json.landed.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    // Executed and failed (the fee was charged), not "included without execution" (issue #24 item 6).
    expect(failed.json.landed).toMatchObject({ execution: 'failed', executionSource: 'status' });
    // The receipt may see the status before the cluster confirms it: ask until getTransaction has it.
    const tx = await waitFor('getTransaction', () => localnet.getTransaction(accepted.json.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }), (t) => t !== null, 10_000);
    expect(tx?.meta?.fee).toBeGreaterThan(0);
  });

  it('a failure the status alone cannot settle (a payer left below rent exemption) is settled by getTransaction', async () => {
    // The payer sends all but 1 lamport (after the fee): the transfer executes, then the runtime's post-execution
    // rent check fails it with InsufficientFundsForRent of account 0, the error a SIMD-0290 no-op can also carry.
    const poor = Keypair.generate();
    const s = await localnet.requestAirdrop(poor.publicKey, 10_000_000);
    await localnet.confirmTransaction({ signature: s, ...(await localnet.getLatestBlockhash('confirmed')) }, 'confirmed');
    const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: poor.publicKey, blockhash, lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: poor.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 10_000_000 - 5_000 - 1 }),
    );
    tx.sign(poor);
    const accepted = await submit(relay, tx.serialize().toString('base64'), ['rpc']);
    expect(accepted.status).toBe(200);
    const settled = await waitFor('settled by getTransaction', () => receipt(relay, accepted.json.signature), (r) => r.json.landed?.executionSource === 'transaction', 20_000);
    const chain = await waitFor('getTransaction', () => localnet.getTransaction(accepted.json.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }), (t) => t !== null, 10_000);
    expect(settled.json.status).toBe('landed_failed');
    expect(settled.json.landed.err).toEqual(chain?.meta?.err);
    // What the cluster reports decides: a charged fee means it was processed (failed), not a no-op.
    expect(chain?.meta?.fee).toBeGreaterThan(0);
    expect(settled.json.landed.execution).toBe('failed');
  });

  it('only the submitting key sees the receipt; JSON-RPC getTransactionReceipt answers the same or null', async () => {
    const accepted = await submit(relay, await transfer(1_000_000), ['rpc']);
    const signature = accepted.json.signature as string;
    const other = await receipt(relay, signature, OTHER_KEY);
    expect(other.status).toBe(404);
    expect(other.json).toEqual({
      error: { code: -32602, reason: 'receipt_not_found', message: "Not found: no receipt for this signature under this API key (unknown, another key's, or older than receipts.ttlMs)" },
    });
    expect((await receipt(relay, signature, null)).status).toBe(401);
    const bad = await receipt(relay, 'not-a-signature');
    expect(bad.status).toBe(400);
    expect(bad.json.error.reason).toBe('invalid_params');

    const rpc = async (key: string) =>
      (await (
        await fetch(relay.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ jsonrpc: '2.0', id: 'rc', method: 'getTransactionReceipt', params: [signature] }),
        })
      ).json()) as any;
    const mine = await rpc(TEST_KEY);
    expect(mine.id).toBe('rc');
    expect(mine.result).toMatchObject({ signature, routes: { rpc: expect.any(Object) } });
    expect((await rpc(OTHER_KEY)).result).toBeNull();
  });

  it('counts landings per route and slots-to-land in /metrics', async () => {
    const metrics = await (await fetch(`${relay.relayUrl}/metrics`)).text();
    expect(metrics).toMatch(/slotrelay_receipts_landed_total\{route="rpc"\} [1-9]/);
    expect(metrics).toMatch(/slotrelay_receipts_landed_total\{route="direct"\} [1-9]/);
    expect(metrics).toMatch(/slotrelay_slots_to_land_count [1-9]/);
    expect(metrics).toMatch(/slotrelay_receipts_landed_failed_total [1-9]/);
    // Nothing here was included without execution: the localnet never commits a transaction that cannot pay.
    expect(metrics).toMatch(/slotrelay_receipts_not_executed_total 0/);
    // The landings above were seen by the status thread's calls, not the front's (src/rpc/status/status-thread.ts).
    expect(metrics).toMatch(/slotrelay_receipts_status_polls_total\{thread="status_thread"\} [1-9]/);
    expect(metrics).toMatch(/slotrelay_receipts_status_polls_total\{thread="front"\} 0\n/);
    expect(metrics).toMatch(/slotrelay_receipts_status_thread_up 1\n/);
    // Each thread publishes its heap at its start and every 5 s (src/metrics/thread-memory.ts).
    await waitFor('a receipt-status thread in /metrics', async () => (await fetch(`${relay.relayUrl}/metrics`)).text(), (t) => /slotrelay_thread_heap_used_bytes\{thread="receipt-status",id="\d+"\} \d/.test(t), 10_000);
  });
});

describe('a receipt shows what a route could not do', () => {
  it('a leader that is down (localnet links[0].down): what was sent while it led lands in a later leader\'s slot, and the receipt shows how', async () => {
    // Three validators, the largest-stake one down (no handshake, like a dead host). Transactions accepted while it
    // leads cannot land in its slots: the receipt must show them landing later, by another leader, through the direct
    // route's fanout to the next leader or a rebroadcast.
    const r3 = await startRelay({
      routes: { direct: { enabled: true, connectTimeoutMs: 300 } },
      receipts: { pollMs: 100 },
      localnet: { validators: 3, links: [{ down: true }] },
    });
    try {
      const conn = new Connection(localnetUrl(r3), 'confirmed');
      const down = (await conn.getVoteAccounts()).current.sort((x, y) => y.activatedStake - x.activatedStake)[0].nodePubkey;
      const p3 = Keypair.generate();
      const s = await conn.requestAirdrop(p3.publicKey, LAMPORTS_PER_SOL);
      const latest = await conn.getLatestBlockhash('confirmed');
      await conn.confirmTransaction({ signature: s, ...latest }, 'confirmed');
      await waitFor('direct deliverable', async () => (await (await fetch(`${r3.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes.direct.deliverable === true, 15_000);
      // Wait for a slot the down validator leads, then send at once (rebroadcast on: maxRetries absent). The localnet
      // runs Alpenglow: the down leader's slots are skipped, so the processed slot stays on the block before them and
      // the slot after it is the down validator's (under Tower this also fires up to a slot before its window).
      await waitFor('a slot led by the down validator', async () => {
        const slot = await conn.getSlot('processed');
        return (await conn.getSlotLeaders(slot + 1, 1))[0]?.toBase58();
      }, (leader) => leader === down, 20_000, 20);
      const signatures: string[] = [];
      for (let i = 0; i < 3; i++) {
        const tx = new Transaction({ feePayer: p3.publicKey, ...(await conn.getLatestBlockhash('confirmed')) }).add(
          SystemProgram.transfer({ fromPubkey: p3.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 + i }),
        );
        tx.sign(p3);
        const res = await fetch(`${r3.relayUrl}/v1/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
          body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['direct'] }),
        });
        const json = (await res.json()) as { signature: string };
        expect(res.status, JSON.stringify(json)).toBe(200);
        signatures.push(json.signature);
      }
      const leaders = new Map<number, string>();
      for (const sig of signatures) {
        const done = await waitFor('landed', () => receipt(r3, sig), (x) => x.json.status === 'landed', 30_000);
        const r = done.json;
        expect(r.landed.leader).not.toBe(down);
        expect(r.routes.direct.outcome).toBe('sent');
        // It got there by the fanout (more than the one down leader targeted) or by a rebroadcast.
        expect(r.routes.direct.targets > 1 || r.rebroadcasts > 0, JSON.stringify(r)).toBe(true);
        if (r.acceptedSlot !== null) {
          const acceptedLeader = leaders.get(r.acceptedSlot) ?? (await conn.getSlotLeaders(r.acceptedSlot, 1))[0].toBase58();
          leaders.set(r.acceptedSlot, acceptedLeader);
          if (acceptedLeader === down) expect(r.landed.slotsToLand).toBeGreaterThanOrEqual(1);
        }
      }
    } finally {
      await r3.stop('SIGKILL');
    }
  });

  it('a peer that is down: the static route ends dropped with its reason while direct sends and the transaction lands', async () => {
    // A UDP port nothing listens on: the static peer never completes a handshake. This relay's landing poll runs on the
    // front (receipts.statusThread false): landings are still seen, and no receipts status thread exists.
    const r2 = await startRelay({
      routes: { direct: { enabled: true, connectTimeoutMs: 300, staleAfterMs: 1_000 }, static: { peers: ['127.0.0.1:9'] } },
      receipts: { statusThread: false },
    });
    try {
      const conn = new Connection(localnetUrl(r2), 'confirmed');
      const p2 = Keypair.generate();
      const s = await conn.requestAirdrop(p2.publicKey, LAMPORTS_PER_SOL);
      const latest = await conn.getLatestBlockhash('confirmed');
      await conn.confirmTransaction({ signature: s, ...latest }, 'confirmed');
      await waitFor('direct deliverable', async () => (await (await fetch(`${r2.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes.direct.deliverable === true, 15_000);
      const tx = new Transaction({ feePayer: p2.publicKey, ...(await conn.getLatestBlockhash('confirmed')) }).add(
        SystemProgram.transfer({ fromPubkey: p2.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 2_000_000 }),
      );
      tx.sign(p2);
      const accepted = await submit(r2, tx.serialize().toString('base64'), ['direct']);
      expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
      // static is added by the relay (routes.static.everyTransaction) and shows in the receipt once it answered.
      const done = await waitFor(
        'both routes answered and landed',
        () => receipt(r2, accepted.json.signature),
        (x) => x.json.status === 'landed' && x.json.routes.static?.outcome !== undefined && x.json.routes.static.outcome !== 'pending',
        20_000,
      );
      expect(done.json.routes.direct.outcome).toBe('sent');
      expect(done.json.routes.static.outcome).toMatch(/^dropped:(no_connection|stale)$/);
      expect(done.json.routes.static.firstSentAt).toBeNull();
      expect(done.json.landed.firstRoute).toBe('direct');
      // Every thread reports its heap at its start (a status thread would have started with the receipts, before the
      // relay was ready and long before this landing): the egress thread's row is there, a receipt-status row is not.
      const metrics = await waitFor('the egress thread in /metrics', async () => (await fetch(`${r2.relayUrl}/metrics`)).text(), (t) => /slotrelay_thread_heap_used_bytes\{thread="(egress|quic-egress|telemetry)"/.test(t), 10_000);
      expect(metrics).not.toMatch(/slotrelay_receipts_status_thread_up/);
      expect(metrics).not.toMatch(/thread="receipt-status"/);
      expect(metrics).toMatch(/slotrelay_thread_heap_used_bytes\{thread="front"/); // per-thread memory, without a receipt-status row
    } finally {
      await r2.stop('SIGKILL');
    }
  });
});
