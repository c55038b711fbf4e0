// The relay's Geyser stream against an endpoint with a filter limit (yellowstone-grpc's per-deployment limit on
// transaction filters, here 4): a watch of 10 signatures is refused INVALID_ARGUMENT; the stream halves what it
// watches until the endpoint takes it, keeps delivering slots throughout, and still tells the landings it watches.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { GeyserSlotStream, type GeyserStreamState } from '../../../src/telemetry/geyser/geyser-slot-stream.js';
import { signedTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

let ln: Localnet;
let stream: GeyserSlotStream | undefined;

beforeAll(async () => {
  ln = await startLocalnet({ slotMs: 100, validators: 2, grpcPort: 0, grpcMaxTransactionFilters: 4 });
});

afterAll(async () => {
  stream?.close();
  await ln?.stop();
});

describe('a watch beyond the endpoint filter limit', () => {
  it('is cut down until the endpoint takes it; slots keep coming; the watched landings are told', async () => {
    const conn = new Connection(ln.rpcUrl, 'confirmed');
    const payer = Keypair.generate();
    const air = await conn.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
    await waitFor('airdrop', () => conn.getSignatureStatus(air).then((s) => s.value?.confirmationStatus));
    const states: GeyserStreamState['kind'][] = [];
    const slots: number[] = [];
    const told = new Set<string>();
    stream = new GeyserSlotStream({
      url: ln.grpcUrl!,
      onSlot: (s) => slots.push(s),
      onState: (s) => states.push(s.kind),
      stallMs: () => 2_000,
      onTxStatus: (sig) => told.add(sig),
    });
    stream.start();
    await waitFor('slots', () => slots.length > 5);
    const txs = await Promise.all(Array.from({ length: 10 }, () => signedTransfer(conn, payer, 1_000_000)));
    stream.watch(txs.map((t) => t.signature));
    // 10 refused, 5 refused, 2 taken: the stream is back up with the first two watched.
    await waitFor('two downs then up', () => states.filter((s) => s === 'down').length >= 2 && states[states.length - 1] === 'up', Boolean, 10_000);
    const n = slots.length;
    for (const t of txs) await conn.sendRawTransaction(t.bytes, { skipPreflight: true });
    await waitFor('the first two told', () => told.has(txs[0].signature) && told.has(txs[1].signature), Boolean, 10_000);
    expect(told.size).toBe(2);
    await waitFor('slots after', () => slots.length > n + 5);
  });
});
