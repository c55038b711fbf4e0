// Bank throughput: signed SOL transfers executed per second by the localnet bank (litesvm + the window/status
// checks, balance snapshots and history records around it), single thread. Signing happens before the clock starts.
// Run: npx tsc -p tsconfig.json && node dist/bench/localnet/bank.bench.js [count]
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Bank } from '../../src/localnet/bank.js';
import { parseWireTransaction } from '../../src/localnet/wire.js';

const COUNT = Number(process.argv[2] ?? 20_000);
const PAYERS = 64;

const bank = new Bank({ slotMs: 400 });
const payers = Array.from({ length: PAYERS }, () => Keypair.generate());
for (const p of payers) bank.airdrop(p.publicKey, 1_000_000_000_000n);
const blockhash = bank.blockhashAt(0).blockhash;
const recipients = Array.from({ length: 256 }, () => Keypair.generate().publicKey);

const txs: Uint8Array[] = [];
for (let i = 0; i < COUNT; i++) {
  const payer = payers[i % PAYERS];
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 150 }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipients[i % recipients.length], lamports: 1_000_000 + i }),
  );
  tx.sign(payer);
  txs.push(tx.serialize());
}

function run(label: string, fn: (tx: Uint8Array) => boolean): void {
  const t0 = process.hrtime.bigint();
  let landed = 0;
  for (const tx of txs) if (fn(tx)) landed++;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ bench: 'localnet.bank', case: label, transactions: txs.length, landed, seconds: +s.toFixed(3), txPerSecond: Math.round(txs.length / s), usPerTx: +((s * 1e6) / txs.length).toFixed(1) }));
}

// 1. Parse only (the wire checks in front of litesvm).
run('parse', (tx) => parseWireTransaction(tx).signatures.length === 1);
// 2. Full execute: parse + window/status checks + litesvm + balances + record. Slots advance every 2,000 txs.
let n = 0;
run('execute', (tx) => {
  if (++n % 2000 === 0) bank.advanceToSlot(bank.slot + 1);
  return bank.execute(tx).landed;
});
// 3. Duplicates: all refused by the status cache before litesvm.
run('duplicate', (tx) => bank.execute(tx).landed);
