// Issue #43 item 3 as a user sees it: a relay on its embedded localnet (Alpenglow, the default) learns landings from
// the upstream's PubSub (signatureSubscribe at processed and finalized), not from the getSignatureStatuses poll: with
// the poll at 5 s, a transaction sent through the relay shows landed.processedAt / finalizedAt / finalizedSlot well
// before a poll could have told. The relay's upstream PubSub goes through a TCP proxy the test owns; killing it
// (every connection cut, new ones refused) turns the relay to the poll: /health?detail says so, /metrics counts the
// switch, and a transaction sent then still lands (by the poll).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { waitFor } from '../../helpers/wait-for.js';

const POLL_MS = 5_000;

/** A TCP proxy to `target` (set once known); `kill()` cuts every connection and refuses new ones. */
class KillableProxy {
  target: { host: string; port: number } | null = null;
  private refusing = false;
  private readonly sockets = new Set<Socket>();
  readonly server: Server = createServer((client) => {
    if (this.refusing || this.target === null) return void client.destroy();
    const up = connect(this.target.port, this.target.host);
    for (const s of [client, up]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(up).pipe(client);
  });
  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as { port: number }).port;
  }
  kill(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
  }
}

let relay: RelayHandle;
let ln: Connection;
let payer: Keypair;
const proxy = new KillableProxy();

async function transferThroughRelay(lamports: number): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await ln.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  const res = await fetch(`${relay.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['rpc'], maxRetries: 0 }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { signature: string }).signature;
}

async function receipt(signature: string): Promise<any> {
  return (await fetch(`${relay.relayUrl}/v1/transactions/${signature}`, { headers: { 'x-api-key': TEST_KEY } })).json();
}

async function detail(): Promise<any> {
  return (await fetch(`${relay.rpcUrl}/health?detail`)).json();
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

beforeAll(async () => {
  const proxyPort = await proxy.listen();
  relay = await startRelay({
    receipts: { pollMs: POLL_MS },
    upstream: { wsUrl: `ws://127.0.0.1:${proxyPort}/` },
  });
  const rpc = new URL(embeddedLocalnetUrl(relay));
  proxy.target = { host: rpc.hostname, port: Number(rpc.port) + 1 }; // the localnet's PubSub: its RPC port + 1
  ln = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(ln, 2);
  // The first connect was refused (no target yet): the push comes up on a retry (backoff at most 5 s).
  await waitFor('push up', detail, (d) => d.landing?.source === 'push', 15_000);
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
  proxy.server.close();
});

describe('landings by push (upstream PubSub signatureSubscribe)', () => {
  it('shows processedAt, finalizedAt and finalizedSlot from the push, long before a 5 s poll could', async () => {
    const t0 = Date.now();
    const signature = await transferThroughRelay(1_000_000);
    const r = await waitFor('finalized', () => receipt(signature), (x) => x.landed?.finalizedAt != null, POLL_MS - 1_000, 25);
    const seenBy = Date.now() - t0;
    expect(r.status).toBe('landed');
    expect(r.landed).toMatchObject({ err: null, execution: 'executed', confirmationStatus: 'finalized', finalizedSlot: expect.any(Number) });
    expect(r.landed.processedAt).toBeGreaterThanOrEqual(r.acceptedAt);
    expect(r.landed.finalizedAt).toBeGreaterThanOrEqual(r.landed.processedAt);
    expect(r.landed.msToLand).toBe(r.landed.processedAt - r.acceptedAt);
    expect(r.landed.finalizedSlot).toBeGreaterThanOrEqual(r.landed.slot);
    // The slot is the cluster's.
    const st = (await ln.getSignatureStatuses([signature])).value[0];
    expect(st?.slot).toBe(r.landed.slot);
    expect(seenBy).toBeLessThan(POLL_MS);
    expect(await metric('slotrelay_receipts_landings_by_source_total', 'source="push"')).toBeGreaterThanOrEqual(1);
    expect(await metric('slotrelay_receipts_push_notifications_total', 'commitment="finalized"')).toBeGreaterThanOrEqual(1);
    expect(await metric('slotrelay_receipts_push_up', '')).toBe(1);
  });

  it('falls back to the poll when the upstream PubSub is killed: /health?detail and /metrics say so; the receipt still lands', async () => {
    const before = await metric('slotrelay_receipts_landing_source_switches_total', 'to="poll"');
    const polledBefore = await metric('slotrelay_receipts_landings_by_source_total', 'source="poll"');
    proxy.kill();
    const d = await waitFor('poll', detail, (x) => x.landing?.source === 'poll', 5_000);
    expect(d.landing).toMatchObject({ source: 'poll', push: 'down' });
    expect(await metric('slotrelay_receipts_landing_source_switches_total', 'to="poll"')).toBe(before + 1);
    expect(await metric('slotrelay_receipts_push_up', '')).toBe(0);
    const switchLogs = () => relay.logs.filter((l) => l.includes('"event":"receipts_landing_source"') && l.includes('"source":"poll"')).length;
    const logged = switchLogs();
    const signature = await transferThroughRelay(1_100_000);
    const r = await waitFor('landed by poll', () => receipt(signature), (x) => x.landed?.finalizedAt != null, 3 * POLL_MS, 100);
    expect(r.status).toBe('landed');
    expect(r.landed.processedAt).toBeGreaterThanOrEqual(r.acceptedAt);
    expect(await metric('slotrelay_receipts_landings_by_source_total', 'source="poll"')).toBe(polledBefore + 1);
    // Reconnects keep failing (refused) without another log line: logged once per switch.
    expect(switchLogs()).toBe(logged);
    // No key in what the relay logs about the upstream socket.
    expect(relay.logs.filter((l) => l.includes('receipts_landing_source')).join('\n')).not.toContain(TEST_KEY);
  });
});
