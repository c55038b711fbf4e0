// sendTransaction's minContextSlot with skipPreflight, through the real relay following the real localnet: Agave answers
// -32016 "Minimum context slot has not been reached" with data {contextSlot} when its processed bank is below it, even
// with skipPreflight; the relay compares with the slot its telemetry snapshot last saw (docs/protocol-decisions.md).
import { createSolanaRpc, isSolanaError, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED, type Base64EncodedWireTransaction } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer, v0Transfer } from '../../helpers/transactions.js';

let localnet: Localnet;
let relay: RelayHandle;

const telemetry = { maxSnapshotAgeMs: 1_500, probe: { enabled: false } };

async function rpc(url: string, body: unknown, headers: Record<string, string> = { 'x-api-key': TEST_KEY }): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

const send = (id: unknown, base64: string, cfg: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'sendTransaction',
  params: [base64, { encoding: 'base64', skipPreflight: true, ...cfg }],
});

async function snapshotReady(url: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await rpc(url, { jsonrpc: '2.0', id: 0, method: 'getLeaderSlots', params: [localnet.clock.current] });
    if (r.json.result) return;
    if (Date.now() > deadline) throw new Error(`no snapshot: ${JSON.stringify(r.json)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

beforeAll(async () => {
  localnet = await startLocalnet({ validators: 2, slotMs: 100 });
  relay = await startRelay({
    upstream: { rpcUrl: localnet.rpcUrl },
    routes: { rpc: { endpoints: [localnet.rpcUrl] } },
    telemetry,
    log: { level: 'warn' },
  });
  await snapshotReady(relay.rpcUrl);
});

afterAll(async () => {
  await relay?.stop();
  await localnet?.stop();
});

describe('sendTransaction minContextSlot with skipPreflight', () => {
  it('ahead of the slot the relay has seen -> -32016 with data.contextSlot, on both JSON-RPC paths; nothing sent', async () => {
    for (const url of [relay.rpcUrl, `${relay.relayUrl}/v1/sendTransaction`]) {
      const tx = legacyTransfer();
      const now = localnet.clock.current;
      const r = await rpc(url, send('m', tx.base64, { minContextSlot: now + 10_000 }));
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        jsonrpc: '2.0',
        error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: expect.any(Number) } },
        id: 'm',
      });
      expect(Math.abs(r.json.error.data.contextSlot - now)).toBeLessThanOrEqual(5);
    }
    const metrics = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
    expect(metrics).toMatch(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="min_context_slot_not_reached"\} 1/);
    expect(metrics).toMatch(/slotrelay_egress_records_total\{stage="consumed"\} 0/);
  });

  it('@solana/kit decodes it as MIN_CONTEXT_SLOT_NOT_REACHED with the context slot', async () => {
    const tx = v0Transfer();
    const kit = createSolanaRpc(relay.rpcUrl, { headers: { 'x-api-key': TEST_KEY } });
    const err = await kit
      .sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true, minContextSlot: BigInt(localnet.clock.current + 10_000) })
      .send()
      .catch((e: unknown) => e);
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED)).toBe(true);
    expect(Number((err as { context: { contextSlot: bigint } }).context.contextSlot)).toBeGreaterThan(0);
  });

  it('at or behind the slot the relay has seen -> accepted', async () => {
    const kit = createSolanaRpc(relay.rpcUrl, { headers: { 'x-api-key': TEST_KEY } });
    const tx = v0Transfer();
    const sig = await kit
      .sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true, minContextSlot: BigInt(Math.max(0, localnet.clock.current - 3)) })
      .send();
    expect(sig).toBe(tx.signature);
    const raw = legacyTransfer();
    const r = await rpc(`${relay.relayUrl}/v1/sendTransaction`, send(7, raw.base64, { minContextSlot: 0 }));
    expect(r.json).toEqual({ jsonrpc: '2.0', result: raw.signature, id: 7 });
  });

  it('a relay that has no snapshot does not check (it cannot know its slot)', async () => {
    const blind = await startRelay({
      upstream: { rpcUrl: localnet.rpcUrl },
      routes: { rpc: { endpoints: [localnet.rpcUrl] } },
      telemetry: { ...telemetry, rpcUrl: 'http://127.0.0.1:9' },
      log: { level: 'error' },
    });
    try {
      const tx = legacyTransfer();
      const r = await rpc(blind.rpcUrl, send('b', tx.base64, { minContextSlot: localnet.clock.current + 10_000 }));
      expect(r.json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 'b' });
    } finally {
      await blind.stop();
    }
  });

  it('a stale snapshot is not trusted either (last: stops the clock)', async () => {
    localnet.clock.stop();
    const slot = localnet.clock.current;
    const before = legacyTransfer();
    const refused = await rpc(relay.rpcUrl, send('s0', before.base64, { minContextSlot: slot + 1_000 }));
    expect(refused.json.error?.code).toBe(-32016);
    await new Promise((res) => setTimeout(res, 1_700));
    const tx = legacyTransfer();
    const r = await rpc(relay.rpcUrl, send('s', tx.base64, { minContextSlot: slot + 1_000 }));
    expect(r.json).toEqual({ jsonrpc: '2.0', result: tx.signature, id: 's' });
  });
});
