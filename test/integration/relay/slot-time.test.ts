// Slot time is measured, not assumed (issue #24 item 5, docs/slot-time.md): a real relay on the embedded localnet
// running at 200 ms slots reports the slot duration its telemetry thread measured (GET /health?detail leaderData and
// /metrics), and transactions sent through it land, by the direct route (which extrapolates the current slot with
// that duration) and by the rpc route.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

const SLOT_MS = 200;
/** The estimate over notification jitter on a busy 2-core box: within 15 % (the fallback, 250 ms, is 25 % off). */
const TOLERANCE = 0.15;
/**
 * The first estimate, from the few samples there are when `slotMsMeasured` turns true, on a box busy with the
 * relay's and the localnet's start: within 20 % (231 ms was seen once in a CI rehearsal), still short of the 250 ms
 * fallback. The estimate a full window later must be within TOLERANCE.
 */
const FIRST_TOLERANCE = 0.2;

let relay: RelayHandle;
let localnet: Connection;
const payer = Keypair.generate();

interface LeaderData {
  fresh: boolean;
  slotMs: number;
  slotMsMeasured: boolean;
  behindSlots: number | null;
}

async function leaderData(): Promise<LeaderData> {
  const h = (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as { leaderData: LeaderData };
  return h.leaderData;
}

async function transfer(lamports: number): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}

async function submit(tx: string, routes: string[]): Promise<string> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx, routes }),
  });
  const json = (await res.json()) as { signature?: string };
  expect(res.status).toBe(200);
  return json.signature as string;
}

beforeAll(async () => {
  relay = await startRelay({ localnet: { slotMs: SLOT_MS, validators: 3 }, routes: { direct: { enabled: true } } });
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  const sig = await localnet.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('slot time at 200 ms slots', () => {
  it('GET /health?detail reports the measured slot duration, not the fallback', async () => {
    const d = await waitFor('slot time measured', leaderData, (x) => x.slotMsMeasured && x.fresh, 15_000);
    expect(Math.abs(d.slotMs - SLOT_MS)).toBeLessThanOrEqual(SLOT_MS * FIRST_TOLERANCE);
    // Measured again a few seconds later (a full window of samples): still 200 ms.
    await new Promise((r) => setTimeout(r, 3_000));
    const later = await leaderData();
    expect(later.slotMsMeasured).toBe(true);
    expect(Math.abs(later.slotMs - SLOT_MS)).toBeLessThanOrEqual(SLOT_MS * TOLERANCE);
    expect(later.behindSlots).not.toBeNull();
    console.info(`measured slot time at ${SLOT_MS} ms slots: ${d.slotMs} ms, then ${later.slotMs} ms`);
  });

  it('/metrics exports it in seconds', async () => {
    const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    const seconds = Number(/^slotrelay_cluster_slot_duration_seconds (\S+)$/m.exec(text)?.[1]);
    expect(Math.abs(seconds - SLOT_MS / 1000)).toBeLessThanOrEqual((SLOT_MS / 1000) * TOLERANCE);
    expect(text).toMatch(/^slotrelay_cluster_slot_duration_measured 1$/m);
  });

  it('transactions sent through the relay land (direct and rpc routes)', async () => {
    await waitFor('direct deliverable', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as { routes: { direct: { deliverable: boolean } } }, (h) => h.routes.direct.deliverable, 15_000);
    const direct = await submit(await transfer(1_000_000), ['direct']);
    const rpc = await submit(await transfer(1_100_000), ['rpc']);
    for (const signature of [direct, rpc]) {
      const st = await waitFor(`${signature} landed`, async () => (await localnet.getSignatureStatuses([signature])).value[0], (s) => s !== null && s.err === null, 20_000);
      expect(st?.slot).toBeGreaterThan(0);
    }
  });
});
