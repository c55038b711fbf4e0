// What a per-leader report costs the front thread (issue #44 item 4, docs/leader-counters.md): ms per
// LeaderCounters.report() over a full receipts table (131,072 receipts, every one in the 256-slot window and sent by
// the direct route), for the operator's view (every key) and one key's (a quarter of the receipts), capped at SCAN_MAX
// and uncapped. Each round asks at a later time so the report is built, not reused. Median and max of 7 rounds, after
// 3 warm-up rounds.
//   npx tsc -p tsconfig.json && node dist/bench/receipts/leader-counters.bench.js
import { ReceiptWriter } from '../../src/egress/contract/receipt-writer.js';
import { LeaderCounters, SCAN_MAX } from '../../src/receipts/leader-counters.js';
import { ReceiptTable } from '../../src/receipts/receipt-table.js';
import { ROUTE_IDS } from '../../src/shm/layout.js';
import type { LeaderSource } from '../../src/telemetry/leader-source.js';

const N = 131_072;
const ROUNDS = 7;
const WARMUP = 3;
const table = new ReceiptTable({ capacity: N, ttlMs: 600_000 });
const writer = new ReceiptWriter(table.sab);
const slot = { v: 0 };
const source: LeaderSource = { currentSlot: () => slot.v, leaderAt: (s) => ({ identity: `L${Math.floor(s / 4)}`, tpuQuic: '127.0.0.1:1', stake: 1 }), ageMs: () => 0 };
const counters = new LeaderCounters(table, source, { slots: 256 });
const now = Date.now();
for (let i = 0; i < N; i++) {
  slot.v = Math.floor((i * 256) / N);
  if (i % 512 === 0) counters.note();
  const seq = table.accept(`s${i}`, i % 4, 1 << ROUTE_IDS.direct, 'trace', now, slot.v);
  writer.routeOutcome(seq, ROUTE_IDS.direct, 0, 2, slot.v, now + 3);
}
slot.v = 255;
let at = now;
// Warm the JIT on every path first (the first rounds of the first row were 3x the rest).
for (let r = 0; r < WARMUP; r++) for (const key of [null, 1]) counters.report(key, (at += 2_000), Infinity);
for (const [name, key, cap] of [
  ['every key, capped', null, SCAN_MAX],
  ['one key, capped', 1, SCAN_MAX],
  ['every key, whole window', null, Infinity],
  ['one key, whole window', 1, Infinity],
] as const) {
  const ms: number[] = [];
  let scanned = 0;
  for (let r = 0; r < ROUNDS; r++) {
    at += 2_000;
    const t0 = performance.now();
    scanned = counters.report(key, at, cap).scanned;
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  console.log(`${name.padEnd(26)} median ${ms[ROUNDS >> 1].toFixed(1)} ms, max ${ms[ROUNDS - 1].toFixed(1)} ms (counted ${scanned})`);
}
