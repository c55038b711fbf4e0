// A transaction really lands on the embedded localnet and the relay's rebroadcast stops because of it.
// Path: relay (child process) --rpc route--> counting proxy --> localnet facade --QUIC--> current leader --> bank.
// The proxy loses the FIRST sendTransaction of each signature (answers an error without forwarding, like a dropped
// packet), so the transaction lands only because a rebroadcast carried it; getSignatureStatuses / isBlockhashValid
// are forwarded as they are, so "landed" is the localnet's own word; they are made by the egress worker's status
// thread (src/rpc/status/), which the test sees running.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';

let ln: Localnet;
let proxy: Server;
let proxyUrl = '';
let relay: RelayHandle;
const sends = new Map<string, number>();
const payer = Keypair.generate();

function startProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8')) as { id: unknown; method: string; params: unknown[] };
      if (body.method === 'sendTransaction') {
        const sig = bs58.encode(Buffer.from(body.params[0] as string, 'base64').subarray(1, 65));
        const n = (sends.get(sig) ?? 0) + 1;
        sends.set(sig, n);
        if (n === 1) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32005, message: 'test proxy: first send lost' } }));
          return;
        }
      }
      const up = request(target, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': raw.length } }, (r) => {
        res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
        r.pipe(res);
      });
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      up.end(raw);
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

beforeAll(async () => {
  ensureDist();
  ln = await startLocalnet({ slotMs: 100 });
  proxy = await startProxy(ln.rpcUrl);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const conn = new Connection(ln.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
  const sig = await conn.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
  await conn.confirmTransaction({ signature: sig, ...(await conn.getLatestBlockhash()) }, 'confirmed');
  relay = await startRelay({
    upstream: { rpcUrl: proxyUrl },
    routes: { rpc: { endpoints: [proxyUrl] } },
    retries: { intervalMs: 300, statusPollMs: 100 },
  });
});
afterAll(async () => {
  await relay?.stop();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await ln?.stop();
});

function metric(text: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`slotrelay_retry_transactions_total{${labels}} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('rebroadcast against the localnet', () => {
  it('the first send is lost, a rebroadcast lands it, and rebroadcast stops once it is confirmed', async () => {
    const conn = new Connection(ln.rpcUrl, { commitment: 'confirmed' });
    const to = Keypair.generate().publicKey;
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    const signature = bs58.encode(tx.signature!);
    const res = await fetch(`${relay.relayUrl}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'x-request-id': 'localnet-retry' },
      body: JSON.stringify({ transaction: tx.serialize().toString('base64'), routes: ['rpc'], maxRetries: 30 }),
    });
    expect(res.status).toBe(200);
    const deadline = Date.now() + 20_000;
    let text = '';
    while (metric((text = await (await fetch(`${relay.relayUrl}/metrics`)).text()), 'outcome="landed"') !== 1) {
      if (Date.now() > deadline) throw new Error(`never landed; sends=${sends.get(signature)}\n${text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const status = await conn.getSignatureStatuses([signature]);
    expect(['confirmed', 'finalized']).toContain(status.value[0]?.confirmationStatus);
    expect(status.value[0]?.err).toBeNull();
    expect(await conn.getBalance(to)).toBe(1_000_000);
    const atLanding = sends.get(signature)!;
    expect(atLanding).toBeGreaterThanOrEqual(2); // the lost first send + the rebroadcast that landed it
    await new Promise((r) => setTimeout(r, 1_000)); // > 3 intervals
    expect(sends.get(signature)).toBe(atLanding);
    expect(atLanding).toBeLessThan(31);
    expect(metric(text, 'outcome="recovered"')).toBe(1);
    // The rebroadcast's status polls ran in the consumer thread's status thread (src/rpc/status/, issue #28): it is
    // up, and it never failed (while it is down the consumer thread asks itself, and says so in the log).
    const up = Date.now() + 10_000;
    while (!/slotrelay_thread_heap_used_bytes\{thread="retry-status"/.test(await (await fetch(`${relay.relayUrl}/metrics`)).text())) {
      if (Date.now() > up) throw new Error('no retry-status thread in /metrics');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(relay.logs.filter((l) => /"event":"status_thread_(exit|error)"/.test(l))).toEqual([]);
  });
});
