// simulateTransaction on the JSON-RPC host (issue #11 item 2), against a real relay on the embedded localnet: an
// unchanged @solana/web3.js Connection pointed only at the relay simulates a good and a failing transaction; raw
// requests check Agave's full result shape and every refusal the relay answers before the upstream is asked, with
// the request id; the key's simulateLimit answers 429 + Retry-After; a dead upstream answers -32005 at once.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { defaultKeys, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const SIM_TIGHT_KEY = '3b7e1f0a-5c2d-4e8f-9a6b-1c0d2e3f4a5b';

let relay: RelayHandle;
let localnet: Connection;
let conn: Connection;
const payer = Keypair.generate();

async function rpc(body: unknown, key = TEST_KEY): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(relay.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

async function transfer(lamports: number, from = payer, to = Keypair.generate().publicKey): Promise<VersionedTransaction> {
  const { blockhash } = await localnet.getLatestBlockhash('confirmed');
  const msg = new TransactionMessage({
    payerKey: from.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports })],
  }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  tx.sign([from]);
  return tx;
}

function b64(tx: VersionedTransaction): string {
  return Buffer.from(tx.serialize()).toString('base64');
}

beforeAll(async () => {
  relay = await startRelay({
    keys: [...defaultKeys(), { key: SIM_TIGHT_KEY, name: 'sim-tight', simulateLimit: { perSecond: 0.2, burst: 2 } }],
  });
  const started = relay.logs.map((l) => (l.includes('"event":"localnet_started"') ? (JSON.parse(l) as { rpcUrl: string }) : null)).find((x) => x !== null);
  localnet = new Connection(started!.rpcUrl, 'confirmed');
  const sig = await localnet.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
  const latest = await localnet.getLatestBlockhash('confirmed');
  await localnet.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
  conn = new Connection(relay.rpcUrl, { commitment: 'confirmed', httpHeaders: { 'x-api-key': TEST_KEY }, disableRetryOnRateLimit: true });
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGTERM');
});

describe('simulateTransaction through the relay', () => {
  it('web3.js: a good transfer simulates with logs and units; a failing one reports value.err and its logs in a normal result', async () => {
    const ok = await conn.simulateTransaction(await transfer(5_000_000), { sigVerify: true, commitment: 'confirmed' });
    expect(ok.value.err).toBeNull();
    expect(ok.value.logs).toEqual(expect.arrayContaining([expect.stringContaining('11111111111111111111111111111111 success')]));
    expect(ok.value.unitsConsumed).toBeGreaterThan(0);
    expect(ok.context.slot).toBeGreaterThan(0);

    const failing = await conn.simulateTransaction(await transfer(100 * LAMPORTS_PER_SOL));
    expect(failing.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(failing.value.logs!.join('\n')).toMatch(/insufficient lamports/);
  });

  it("answers Agave's full result shape, every member present, post-simulation accounts as asked", async () => {
    const to = Keypair.generate().publicKey;
    const tx = await transfer(5_000_000, payer, to);
    const r = await rpc({
      jsonrpc: '2.0',
      id: 'shape',
      method: 'simulateTransaction',
      params: [b64(tx), { encoding: 'base64', accounts: { addresses: [to.toBase58()], encoding: 'base64' }, innerInstructions: true }],
    });
    expect(r.status).toBe(200);
    expect(r.json.id).toBe('shape');
    const value = r.json.result.value;
    expect(Object.keys(value)).toEqual(
      expect.arrayContaining(['err', 'logs', 'accounts', 'unitsConsumed', 'loadedAccountsDataSize', 'returnData', 'innerInstructions', 'replacementBlockhash', 'fee', 'preBalances', 'postBalances', 'preTokenBalances', 'postTokenBalances', 'loadedAddresses']),
    );
    expect(value.err).toBeNull();
    expect(value.accounts).toHaveLength(1);
    expect(value.accounts[0]).toMatchObject({ lamports: 5_000_000, owner: '11111111111111111111111111111111', data: ['', 'base64'] });
    expect(typeof value.unitsConsumed).toBe('number');
    expect(typeof r.json.result.context.slot).toBe('number');
  });

  it('replaceRecentBlockhash simulates a transaction whose blockhash the bank never saw and returns the replacement', async () => {
    const stale = legacyTransfer(5_000_000, payer); // signed over a made-up blockhash
    const r = await rpc({ jsonrpc: '2.0', id: 7, method: 'simulateTransaction', params: [stale.base64, { encoding: 'base64', replaceRecentBlockhash: true }] });
    expect(r.json.result.value.err).toBeNull();
    expect(r.json.result.value.replacementBlockhash).toMatchObject({ blockhash: expect.any(String), lastValidBlockHeight: expect.any(Number) });
    const plain = await rpc({ jsonrpc: '2.0', id: 8, method: 'simulateTransaction', params: [stale.base64, { encoding: 'base64' }] });
    expect(plain.json.result.value.err).toBe('BlockhashNotFound');
  });

  it('sigVerify with a signature that does not verify: a normal result with err SignatureFailure (Agave)', async () => {
    const tx = await transfer(1_000);
    const bytes = Buffer.from(tx.serialize());
    bytes[1] ^= 0xff; // first byte of the first signature
    const r = await rpc({ jsonrpc: '2.0', id: 1, method: 'simulateTransaction', params: [bytes.toString('base64'), { encoding: 'base64', sigVerify: true }] });
    expect(r.json.result.value.err).toBe('SignatureFailure');
  });

  it('refuses bad input before the upstream with the exact error and the request id', async () => {
    const tx = b64(await transfer(1_000));
    const cases: [unknown[], string][] = [
      [[tx, { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true }], 'sigVerify may not be used with replaceRecentBlockhash'],
      [[tx, { encoding: 'json' }], 'unsupported encoding: json. Supported encodings: base58, base64'],
      [[tx, { encoding: 'hex' }], 'Invalid params: unknown variant `hex`, expected one of `binary`, `base64`, `base58`, `json`, `jsonParsed`'],
      [[tx, { encoding: 'base64', commitment: 'recent' }], 'Invalid params: unknown variant `recent`, expected one of `processed`, `confirmed`, `finalized` for `commitment`'],
      [[tx, { encoding: 'base64', sigVerify: 'yes' }], 'Invalid params: invalid type: string "yes", expected a boolean for `sigVerify`'],
      [[tx, { encoding: 'base64', accounts: { addresses: [], encoding: 'base58' } }], 'base58 encoding not supported'],
      [[tx, { encoding: 'base64', accounts: { addresses: Array.from({ length: 4 }, () => Keypair.generate().publicKey.toBase58()) } }], 'Too many accounts provided; max 3'],
      [[tx, { encoding: 'base64', accounts: { addresses: ['not-a-key'] } }], 'Invalid param: Invalid'],
      [[tx, { encoding: 'base64', accounts: { addresses: ['1111'] } }], 'Invalid param: WrongSize'],
      [[tx, { encoding: 'base64', accounts: {} }], 'Invalid params: missing field `addresses`'],
      [['AAAA', { encoding: 'base64' }], 'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer'],
      [[], 'Invalid parameters: Expected from 1 to 2 parameters.'],
    ];
    for (const [params, message] of cases) {
      const r = await rpc({ jsonrpc: '2.0', id: 'bad', method: 'simulateTransaction', params });
      expect(r.status, message).toBe(200);
      expect(r.json, message).toMatchObject({ jsonrpc: '2.0', id: 'bad', error: { code: -32602 } });
      expect(r.json.error.message, JSON.stringify(params).slice(0, 80)).toBe(message);
    }
  });

  it("simulations over the key's simulateLimit answer 429 with Retry-After and the id", async () => {
    const tx = b64(await transfer(1_000));
    const body = { jsonrpc: '2.0', id: 'lim', method: 'simulateTransaction', params: [tx, { encoding: 'base64' }] };
    expect((await rpc(body, SIM_TIGHT_KEY)).status).toBe(200);
    expect((await rpc(body, SIM_TIGHT_KEY)).status).toBe(200);
    const refused = await rpc(body, SIM_TIGHT_KEY);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.json).toMatchObject({ id: 'lim', error: { code: -32005, data: { reason: 'rate_limited' } } });
    // Reads are a separate budget: the same key can still read.
    const read = await rpc({ jsonrpc: '2.0', id: 'r', method: 'getLeaderSlots', params: [] }, SIM_TIGHT_KEY);
    expect(read.status).not.toBe(429);
  });
});

describe('simulateTransaction with the upstream gone', () => {
  it('answers -32005 upstream_unavailable at once, with the id, and recovers when the upstream is back', async () => {
    const upstream = await startFakeRpcUpstream();
    const port = Number(new URL(upstream.url).port);
    const r2 = await startRelay({ upstream: { rpcUrl: upstream.url, requestTimeoutMs: 2_000 }, routes: { rpc: { endpoints: [upstream.url] } }, telemetry: { enabled: false } });
    try {
      const tx = legacyTransfer(1_000).base64;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'simulateTransaction', params: [tx, { encoding: 'base64' }] });
      const call = async () => {
        const res = await fetch(r2.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body });
        return (await res.json()) as any;
      };
      const up = await call();
      expect(up.result.value).toMatchObject({ err: null, unitsConsumed: 150, accounts: null, fee: null, loadedAddresses: null });
      await upstream.close();
      const t0 = Date.now();
      const down = await call();
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(down).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'Node is unhealthy: the upstream RPC is unavailable', data: { reason: 'upstream_unavailable' } }, id: 42 });
      // The upstream's address never reaches the client.
      expect(JSON.stringify(down)).not.toContain(String(port));
      const back = await startFakeRpcUpstream({ port });
      try {
        expect((await call()).result.value.err).toBeNull();
        expect(back.calls.some((c) => c.method === 'simulateTransaction')).toBe(true);
      } finally {
        await back.close();
      }
    } finally {
      await r2.stop('SIGKILL');
    }
  });
});
