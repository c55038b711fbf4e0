// Memory of the landing receipts (front thread's table + the shared buffer) as accepted transactions pile up: it must
// plateau at receipts.capacity, whatever the count (issue #13: "receipts stay bounded under 100,000 transactions").
// Run: node --expose-gc dist/bench/receipts/receipt-memory.bench.js [--json bench/results/receipts-memory.json]
// Measures heapUsed + arrayBuffers (the SharedArrayBuffer) after a full GC, at the default capacity (131072) and at
// a small one (8192), after 0, 100k, 500k and 1M acceptances of realistic receipts (88-character signatures).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import bs58 from 'bs58';
import { ReceiptTable } from '../../src/receipts/receipt-table.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function used(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const signatures = Array.from({ length: 4096 }, () => bs58.encode(randomBytes(64)));

function run(capacity: number): { capacity: number; points: { accepted: number; mib: number; kept: number }[] } {
  const base = used();
  const t = new ReceiptTable({ capacity, ttlMs: 600_000 });
  const points: { accepted: number; mib: number; kept: number }[] = [{ accepted: 0, mib: (used() - base) / 2 ** 20, kept: t.size }];
  let accepted = 0;
  for (const target of [100_000, 500_000, 1_000_000]) {
    for (; accepted < target; accepted++) {
      // A fresh string per receipt, as the front thread has (the base58 of each accepted transaction).
      const s = signatures[accepted & 4095].slice(0, 80) + accepted.toString(36).padStart(8, '1');
      t.accept(s, accepted & 7, 3, `req-${accepted}`, Date.now(), accepted >> 3);
    }
    points.push({ accepted, mib: (used() - base) / 2 ** 20, kept: t.size });
  }
  return { capacity, points };
}

run(8192); // warm-up: code and the first garbage collections out of the way before measuring
const results = [run(8192), run(131_072)];
for (const r of results) {
  console.log(`capacity ${r.capacity}: ` + r.points.map((p) => `${p.accepted} accepted -> ${p.mib.toFixed(1)} MiB (${p.kept} kept)`).join('; '));
}
const i = process.argv.indexOf('--json');
if (i > 0) writeFileSync(process.argv[i + 1], JSON.stringify({ node: process.version, date: new Date().toISOString(), results }, null, 2) + '\n');
