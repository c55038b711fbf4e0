// What the receipt stream's hook costs the hot accept() (issue #43 item 4: "cheap when nobody subscribes"): ns per
// ReceiptTable.accept() with no observer (the relay when nobody subscribed), and with one observer that finds no
// subscription for the key (another key's desk subscribed: the stream's first check). Rounds alternate the rows; the
// median per row is printed. An optional module path benches another build of the table (the "before" figure in
// bench/results/receipt-stream.md came from the pre-hook receipt-table.ts compiled next to this one).
//   npx tsc -p tsconfig.json && node dist/bench/receipts/receipt-accept.bench.js [path/to/receipt-table.js]
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import bs58 from 'bs58';
import type { ReceiptTable } from '../../src/receipts/receipt-table.js';

const modPath = process.argv[2];
const mod = (await import(modPath === undefined ? '../../src/receipts/receipt-table.js' : pathToFileURL(resolve(modPath)).href)) as {
  ReceiptTable: new (o: { capacity: number; ttlMs: number }) => ReceiptTable;
};
const N = 200_000;
const ROUNDS = 7;
const signatures = Array.from({ length: N }, () => bs58.encode(randomBytes(64)));

function nsPerAccept(t: ReceiptTable): number {
  const start = process.hrtime.bigint();
  const now = Date.now();
  for (let i = 0; i < N; i++) t.accept(signatures[i], i & 7, 3, 'req', now, i >> 3);
  return Number(process.hrtime.bigint() - start) / N;
}

const plain = new mod.ReceiptTable({ capacity: 131_072, ttlMs: 600_000 });
const observed = new mod.ReceiptTable({ capacity: 131_072, ttlMs: 600_000 });
const hasHook = Array.isArray((observed as { observers?: unknown }).observers);
// The stream's receiptChanged for a receipt of a key nobody subscribed with: one Map lookup, nothing sent.
const subscribedKeys = new Map<number, true>([[99, true]]);
let hits = 0;
if (hasHook) observed.observers.push({ receiptChanged: (seq) => void (subscribedKeys.has(observed.keyIdOf(seq)) && hits++) });
const rows: Record<string, number[]> = { 'accept, nobody subscribed': [], ...(hasHook ? { 'accept, another key subscribed': [] } : {}) };
for (let r = 0; r < ROUNDS; r++) {
  rows['accept, nobody subscribed'].push(nsPerAccept(plain));
  if (hasHook) rows['accept, another key subscribed'].push(nsPerAccept(observed));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(rows)) console.log(`${name.padEnd(32)} ${median(xs).toFixed(1)} ns/op (rounds: ${xs.map((x) => x.toFixed(0)).join(' ')})`);
if (hits !== 0) throw new Error('the observer matched a key nobody subscribed with');
