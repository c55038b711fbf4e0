// The localnet's TPU arrival log (localnet.arrivalLog, localnet_getArrivals; what bench/wire matches send times
// against): every transaction a TPU listener reads, leader or not, landed or not, with its first signature bytes and
// its arrival on this host's CLOCK_MONOTONIC; oldest overwritten beyond the capacity; an error when it is off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { QuicClientConnection } from '../../../src/quic/client-connection.js';
import { createRandomIdentityCertificate } from '../../../src/quic/identity-certificate.js';

let on: Localnet;
let off: Localnet;

beforeAll(async () => {
  [on, off] = await Promise.all([startLocalnet({ slotMs: 400, arrivalLog: 16 }), startLocalnet({ slotMs: 400 })]);
});
afterAll(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

async function rpc(url: string, method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await r.json()) as { result?: any; error?: { code: number; message: string } };
}

/** n transfers with an unknown blockhash (never land), signature bytes 1-8 = 0xa0 + i, then the index. */
function txs(n: number): Buffer[] {
  const payer = Keypair.generate();
  const t = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 });
  t.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
  t.sign(payer);
  const wire = t.serialize();
  return Array.from({ length: n }, (_, i) => {
    const b = Buffer.from(wire);
    b.writeUInt32LE(0xa0a0a0a0, 1);
    b.writeUInt32LE(i, 5);
    return b;
  });
}

describe('localnet TPU arrival log', () => {
  it('logs every transaction a listener read (not landed, any validator) with signature prefix and CLOCK_MONOTONIC arrival', async () => {
    const [host, port] = on.validators[1].tpuQuic.split(':');
    const conn = await QuicClientConnection.connect({ host, port: Number(port), identity: await createRandomIdentityCertificate() });
    const before = process.hrtime.bigint();
    const sent = txs(20);
    for (const tx of sent) expect(conn.tryWrite(tx)).toBe('written');
    let page: { total: number; first: number; next: number; sig8: string[]; arrivalNs: string[] } | undefined;
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      page = (await rpc(on.rpcUrl, 'localnet_getArrivals', [{ from: 0 }])).result;
      if (page !== undefined && page.total >= 20) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const after = process.hrtime.bigint();
    conn.close();
    expect(page!.total).toBe(20);
    // Capacity 16: the first 4 were overwritten; paging starts at the oldest kept.
    expect(page!.first).toBe(4);
    expect(page!.next).toBe(20);
    const kept = page!.sig8.map((s) => Buffer.from(s, 'hex'));
    expect(kept.every((b) => b.readUInt32LE(0) === 0xa0a0a0a0)).toBe(true);
    expect(kept.map((b) => b.readUInt32LE(4)).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 4));
    for (const ns of page!.arrivalNs) {
      expect(BigInt(ns) > before && BigInt(ns) < after).toBe(true);
    }
    const tail = (await rpc(on.rpcUrl, 'localnet_getArrivals', [{ from: 18, limit: 1 }])).result;
    expect(tail).toMatchObject({ first: 18, next: 19 });
    expect(tail.sig8).toHaveLength(1);
  });

  it('answers a clear error when the log is off', async () => {
    const r = await rpc(off.rpcUrl, 'localnet_getArrivals', []);
    expect(r.error?.code).toBe(-32600);
    expect(r.error?.message).toMatch(/arrival log is off/);
  });
});
