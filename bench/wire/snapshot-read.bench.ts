// The per-slot cost issue #28 names on a transaction's path: the first read of each new leader-slot snapshot
// generation (bench process, one thread). Mainnet-sized content (1,500 leaders, 520 rows of ~800 bytes: ~420 KB of row
// text), a new generation per round (slots move, leaders stay, as between two slots), read by
//   before  SnapshotReader(sab)                 the whole payload copied and decoded (what the egress scheduler's
//                                               SnapshotLeaderSource did)
//   after   SnapshotReader(sab, {rows: false})  header + leader index + leader table, the table reused when unchanged
// interleaved per generation (A, B, B, A, ...), each timed with process.hrtime.bigint(); 400 generations.
//   node dist/bench/wire/snapshot-read.bench.js [--json bench/results/snapshot-read.json]
import { writeFileSync } from 'node:fs';
import hdr from 'hdr-histogram-js';
import { createSnapshotBuffer } from '../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter, type SnapshotContent } from '../../src/telemetry/snapshot.js';

const GENERATIONS = 400;
const jsonOut = process.argv.indexOf('--json') >= 0 ? process.argv[process.argv.indexOf('--json') + 1] : null;
const leaders = Array.from({ length: 1_500 }, (_, i) => ({ identity: `Va${String(i).padStart(4, '0')}lidator111111111111111111111111111111`, tpuQuic: `10.${i >> 8}.${i & 255}.1:8009`, stake: 1e12 + i }));
function content(gen: number): SnapshotContent {
  const rows: string[] = [];
  const leaderIndex: number[] = [];
  for (let s = 0; s < 520; s++) {
    const li = (Math.floor((gen + s) / 4) * 7) % leaders.length;
    rows.push(JSON.stringify({ slot: 1_000_000 + gen + s, leader: leaders[li].identity, pad: 'r'.repeat(700) }));
    leaderIndex.push(li);
  }
  return { schemaVersion: 1, firstSlot: 1_000_000 + gen, snapshotSlot: 1_000_008 + gen, generatedAtUnixMs: Date.now(), slotMs: 400, slotMsSamples: 10, leaders, leaderIndex, rows };
}
const sab = createSnapshotBuffer(4 << 20);
const w = new SnapshotWriter(sab);
const before = new SnapshotReader(sab);
const after = new SnapshotReader(sab, { rows: false });
const h = { before: hdr.build({ numberOfSignificantValueDigits: 3 }), after: hdr.build({ numberOfSignificantValueDigits: 3 }) };
const contents = Array.from({ length: 8 }, (_, g) => content(g));
const time = (r: SnapshotReader): number => {
  const t0 = process.hrtime.bigint();
  r.current();
  return Number(process.hrtime.bigint() - t0) / 1000;
};
for (let g = 0; g < GENERATIONS + 20; g++) {
  w.publish(contents[g % contents.length]);
  const order = g % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
  for (const k of order) {
    const us = time(k === 'before' ? before : after);
    if (g >= 20) h[k].recordValue(Math.max(1, Math.round(us))); // the first 20: warm-up (JIT)
  }
}
const s = (x: hdr.Histogram) => ({ p50Us: x.getValueAtPercentile(50), p99Us: x.getValueAtPercentile(99), maxUs: x.maxValue, meanUs: Math.round(x.mean) });
const out = {
  what: 'first read of a new snapshot generation (per slot), mainnet-sized content, paired per generation',
  command: 'node dist/bench/wire/snapshot-read.bench.js',
  date: new Date().toISOString(),
  generations: GENERATIONS,
  copiedBytes: { before: before.lastCopyBytes, after: after.lastCopyBytes },
  before: s(h.before),
  after: s(h.after),
  ratioP50: Math.round((h.after.getValueAtPercentile(50) / h.before.getValueAtPercentile(50)) * 1000) / 1000,
  ratioP99: Math.round((h.after.getValueAtPercentile(99) / h.before.getValueAtPercentile(99)) * 1000) / 1000,
};
console.log(JSON.stringify(out, null, 2));
if (jsonOut !== null) writeFileSync(jsonOut, JSON.stringify(out, null, 2) + '\n');
