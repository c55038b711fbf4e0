// Per-leader counters (issue #44 item 4; docs/leader-counters.md) against a real relay on the embedded localnet: real
// signed transfers sent by the direct route to the localnet's leaders, then GET /v1/leaders per key and the status
// page's frame (every key) are checked against the transactions' own receipts: per leader, what was sent aimed at its
// slots, the copies, what landed and in which leader's slots; a key sees only its own transactions. The status page in
// headless Chromium shows the same per-leader figures in its table.
import { writeFileSync } from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../helpers/cdp.js';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

interface Row {
  identity: string | null;
  slots: number[];
  sent: number;
  copies: number;
  dropped: Record<string, number>;
  landed: number;
  landedInSlots: number;
  slotsToLand: { p50: number | null; max: number | null; buckets: Record<string, number> };
  waited: { n: number; p50Ms: number | null; maxMs: number | null; sumMs: number };
}
interface Report {
  slot: number;
  firstSlot: number;
  lastSlot: number;
  leaders: Row[];
  unattributed: Record<string, number>;
}

let relay: RelayHandle;
let localnet: Connection;
const payer = Keypair.generate();

async function transfer(): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}

async function submit(key: string): Promise<string> {
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ transaction: await transfer(), routes: ['direct'], maxRetries: 0 }),
  });
  const json = (await res.json()) as { signature: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.signature;
}

async function receipt(key: string, signature: string): Promise<any> {
  const res = await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  return res.json();
}

async function leaders(key: string | null): Promise<{ status: number; json: any }> {
  const res = await fetch(`${relay.relayUrl}/v1/leaders`, { headers: key === null ? {} : { 'x-api-key': key } });
  return { status: res.status, json: await res.json() };
}

function localnetUrl(r: RelayHandle): string {
  const started = r.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x !== null);
  return started!.rpcUrl;
}

function sum(rows: readonly Row[], f: (r: Row) => number): number {
  return rows.reduce((n, r) => n + f(r), 0);
}

/** The per-leader figures the receipts of `signatures` imply, checked against `report`. */
function expectMatches(report: Report, receipts: readonly any[]): void {
  const sent = receipts.filter((r) => r.routes.direct.outcome === 'sent');
  const landed = sent.filter((r) => r.landed !== null);
  expect(sum(report.leaders, (l) => l.sent)).toBe(sent.length);
  expect(sum(report.leaders, (l) => l.copies)).toBe(sent.reduce((n, r) => n + r.routes.direct.targets, 0));
  expect(sum(report.leaders, (l) => l.landed)).toBe(landed.length);
  expect(sum(report.leaders, (l) => l.landedInSlots)).toBe(receipts.filter((r) => r.landed !== null).length);
  const dropped = receipts.length - sent.length;
  expect(sum(report.leaders, (l) => Object.values(l.dropped).reduce((a, b) => a + b, 0)) + Object.values(report.unattributed).reduce((a, b) => a + b, 0)).toBe(dropped);
  for (const l of report.leaders) {
    // Each leader's row counts exactly the receipts aimed at its slots, and the landings in its slots.
    const mine = sent.filter((r) => l.slots.includes(r.routes.direct.leaderSlot));
    expect(l.sent, `leader ${l.identity} slots ${l.slots.join(',')}`).toBe(mine.length);
    expect(l.landed).toBe(mine.filter((r) => r.landed !== null).length);
    expect(l.waited.n).toBe(mine.length);
    const here = receipts.filter((r) => r.landed !== null && l.slots.includes(r.landed.slot));
    expect(l.landedInSlots).toBe(here.length);
    // The receipt names the landed slot's leader: the row holding that slot is that leader's.
    for (const r of here) expect(l.identity).toBe(r.landed.leader);
    const lands = mine.filter((r) => r.landed !== null).map((r) => r.landed.slot - r.routes.direct.leaderSlot);
    expect(Object.values(l.slotsToLand.buckets).reduce((a, b) => a + b, 0)).toBe(lands.length);
    if (lands.length > 0) expect(l.slotsToLand.max).toBe(Math.max(0, ...lands));
  }
}

beforeAll(async () => {
  relay = await startRelay({
    routes: { direct: { enabled: true } },
    receipts: { pollMs: 100, leaderSlots: 512 },
    keys: [
      { key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 10_000, burst: 10_000 } },
      { key: OTHER_KEY, name: 'other-bot', rateLimit: { perSecond: 10_000, burst: 10_000 } },
    ],
  });
  localnet = new Connection(localnetUrl(relay), 'confirmed');
  const sig = await localnet.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  await localnet.confirmTransaction({ signature: sig, ...(await localnet.getLatestBlockhash('confirmed')) }, 'confirmed');
  await waitFor('direct deliverable', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as any, (h) => h.routes.direct.deliverable === true, 15_000);
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('per-leader counters (GET /v1/leaders, the status page)', () => {
  it('per leader, sums equal what the receipts say; a key sees only its own; the status page sees all', async () => {
    const mine: string[] = [];
    const theirs: string[] = [];
    // Spread over a few leader windows (4 slots each) so several leaders get rows.
    for (let i = 0; i < 12; i++) {
      (i % 3 === 2 ? theirs : mine).push(await submit(i % 3 === 2 ? OTHER_KEY : TEST_KEY));
      await new Promise((r) => setTimeout(r, 250));
    }
    const settled = (rs: any[]): boolean => rs.every((r) => r.routes.direct.outcome !== 'pending' && (r.routes.direct.outcome !== 'sent' || r.status !== 'pending'));
    const myReceipts = await waitFor('my receipts settled', () => Promise.all(mine.map((s) => receipt(TEST_KEY, s))), settled, 30_000, 200);
    const theirReceipts = await waitFor('their receipts settled', () => Promise.all(theirs.map((s) => receipt(OTHER_KEY, s))), settled, 30_000, 200);
    // The localnet lands what the direct route sends: the sums below are not all zeros.
    expect(myReceipts.filter((r) => r.status === 'landed').length).toBeGreaterThan(0);

    const a = await leaders(TEST_KEY);
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const b = await leaders(OTHER_KEY);
    expect(b.status).toBe(200);
    expect(a.json.firstSlot).toBeLessThanOrEqual(Math.min(...myReceipts.map((r) => r.routes.direct.leaderSlot)));
    expectMatches(a.json as Report, myReceipts);
    expectMatches(b.json as Report, theirReceipts);
    expect(sum(a.json.leaders, (l: Row) => l.sent)).toBeGreaterThan(sum(b.json.leaders, (l: Row) => l.sent));
    // Nor does a key learn the others' volume: what it was counted over is its own transactions.
    expect(a.json.scanned).toBe(mine.length);
    expect(a.json.complete).toBe(true);
    expect(b.json.scanned).toBe(theirs.length);

    // The operator's view (the status page's frame) counts every key's transactions.
    const frame = (await (await fetch(`${relay.adminUrl}/status.json`)).json()) as { leaderCounters: Report };
    expectMatches(frame.leaderCounters, [...myReceipts, ...theirReceipts]);
    // The page a person opens shows the same rows (its table is filled from the frames of GET /events).
    const browser = await launchChromium();
    try {
      const page = await browser.open(`${relay.adminUrl}/`, 1280, 1600);
      const cells = (): Promise<Record<string, string>> =>
        page
          .evaluate<string>("JSON.stringify(Object.fromEntries([...document.querySelectorAll('[data-f^=\"leaderCounters.\"]')].map((e) => [e.getAttribute('data-f'), e.textContent])))")
          .then((t) => JSON.parse(t) as Record<string, string>);
      const total = frame.leaderCounters.leaders.reduce((n, l) => n + l.sent, 0);
      const shown = await waitFor('the per-leader table', cells, (c) => Object.keys(c).filter((k) => k.endsWith('.sent')).reduce((n, k) => n + Number(c[k].replace(/,/g, '')), 0) === total, 10_000, 200);
      const landedShown = Object.keys(shown).filter((k) => k.endsWith('.landed')).reduce((n, k) => n + Number(shown[k].replace(/,/g, '')), 0);
      expect(landedShown).toBe(frame.leaderCounters.leaders.reduce((n, l) => n + l.landed, 0));
      if (process.env.UPDATE_LEADER_SCREENSHOT === '1') writeFileSync('docs/leader-counters.png', await page.screenshot());
    } finally {
      await browser.close();
    }
    // No API key anywhere in what the endpoint or the page answer.
    expect(JSON.stringify(a.json) + JSON.stringify(frame)).not.toContain(TEST_KEY);
    expect(JSON.stringify(frame)).not.toContain(OTHER_KEY);
  }, 120_000);

  it('needs a valid key', async () => {
    expect((await leaders(null)).status).toBe(401);
    expect((await leaders('not-a-key')).status).toBe(401);
  });
});
