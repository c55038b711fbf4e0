// v1 transactions (SIMD-0385) through the client library and `slotrelay send` against a real relay on its embedded
// localnet (issue #24 item 4): a kit-built v1 transfer (createTransactionMessage({ version: 1 }), priority fee and CU
// limit in its config from the library's v1PriorityFeeConfig, signed by signTransactionMessageWithSigners) is
// accepted, and the signature the relay answers is kit's own id for it (the first signature, which v1 puts after the
// message); raw bytes and base64 of it likewise, and a v1 file through `slotrelay send --file`.
//
// EXPECTED TO FAIL until the relay's v1 parser (src/tx/, src/front/: another branch) lands: the relay refuses a v1
// transaction at intake today. Nothing here is skipped or faked: these assertions are what the merged relay must pass.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getSignatureFromTransaction,
  getTransactionEncoder,
  pipe,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessagePriorityFeeLamports,
  signTransactionMessageWithSigners,
  type Blockhash,
} from '@solana/kit';
import { Connection, Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, v1PriorityFeeConfig } from 'slotrelay/client';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';

let relay: RelayHandle;
let localnet: Connection;
let payer: Keypair;
let client: RelayClient;

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({});
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(localnet);
  client = new RelayClient({ url: relay.relayUrl, apiKey: TEST_KEY, rpcUrl: relay.rpcUrl });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await relay?.stop();
});

/** A v1 system transfer built and signed by kit, with a priority fee and CU limit in its config. */
async function kitV1Transfer(lamports: bigint) {
  const signer = await createKeyPairSignerFromBytes(payer.secretKey);
  const { blockhash, lastValidBlockHeight } = await localnet.getLatestBlockhash('confirmed');
  const data = new Uint8Array(12);
  new DataView(data.buffer).setUint32(0, 2, true); // SystemInstruction::Transfer
  new DataView(data.buffer).setBigUint64(4, lamports, true);
  const fee = v1PriorityFeeConfig(10_000, 10_000);
  const msg = pipe(
    createTransactionMessage({ version: 1 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) }, m),
    (m) => setTransactionMessageComputeUnitLimit(fee.computeUnitLimit, m),
    (m) => setTransactionMessagePriorityFeeLamports(fee.priorityFeeLamports, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: address('11111111111111111111111111111111'),
          accounts: [
            { address: signer.address, role: 3 /* writable signer */, signer },
            { address: address(Keypair.generate().publicKey.toBase58()), role: 1 /* writable */ },
          ] as never,
          data,
        },
        m,
      ),
  );
  const tx = await signTransactionMessageWithSigners(msg);
  const bytes = new Uint8Array(getTransactionEncoder().encode(tx));
  expect(bytes[0]).toBe(0x81);
  return { tx, bytes, signature: getSignatureFromTransaction(tx) as string };
}

describe('submit of a kit-built v1 transaction (needs the relay-side v1 parser)', () => {
  it('the kit Transaction object: accepted, and the signature answered is the first one after the message', async () => {
    const k = await kitV1Transfer(1_000_000n);
    const r = await client.submit(k.tx as never, { routes: ['rpc'], maxRetries: 0 });
    expect(r).toMatchObject({ accepted: true, signature: k.signature });
  });

  it('raw bytes and base64 of a v1 transaction: the same id', async () => {
    const a = await kitV1Transfer(1_000_001n);
    expect((await client.submit(a.bytes, { routes: ['rpc'], maxRetries: 0 })).signature).toBe(a.signature);
    const b = await kitV1Transfer(1_000_002n);
    expect((await client.submit(Buffer.from(b.bytes).toString('base64'), { routes: ['rpc'], maxRetries: 0 })).signature).toBe(b.signature);
  });

  it('slotrelay send --file with a v1 transaction (wire bytes): exit 0 and kit\'s id', async () => {
    const k = await kitV1Transfer(1_000_003n);
    const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-v1-')), 'tx.bin');
    writeFileSync(file, k.bytes);
    const child = spawn(process.execPath, ['dist/src/cli.js', 'send', '--file', file, '--routes', 'rpc', '--relay', relay.relayUrl, '--rpc', relay.rpcUrl], {
      env: { PATH: process.env.PATH, SLOTRELAY_KEY: TEST_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const answer = JSON.parse(stdout) as Record<string, unknown>;
    // On a refusal the CLI still names the id it read after the message: the id is right either way.
    expect(answer.signature).toBe(k.signature);
    expect({ code, accepted: answer.accepted }, stdout).toEqual({ code: 0, accepted: true });
  });
});
