// `make bench-micro`: runs every micro benchmark one after the other, each in its own process (a fresh heap and JIT
// per file, so one bench's garbage does not bill the next). Prints each bench's own table and ratios.
//   node dist/bench/run-micro.js [--only NAME]
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const MICRO = [
  ['envelope', 'jsonrpc/envelope.bench.js'],
  ['front-handler', 'front/handler-js.bench.js'],
  ['refusal-cost', 'front/refusal-cost.bench.js'], // exits 1 when a refusal costs the front more than an acceptance
  ['tx-intake', 'tx/tx-intake.bench.js'],
  ['ring', 'shm/ring.bench.js'],
  ['get-leader-slots', 'telemetry/get-leader-slots.bench.js', '--micro-only'],
  ['fee-cache', 'rpc/fee-cache.bench.js'],
  ['fee-hit', 'front/fee-hit.bench.js'],
  ['bank', 'localnet/bank.bench.js'],
  ['localnet-listener', 'localnet/listener-throughput.bench.js'], // ~15 s: real localnet, QUIC sender thread
] as const;

const { values } = parseArgs({ options: { only: { type: 'string' } } });
let failed = 0;
for (const [name, file, ...args] of MICRO) {
  if (values.only !== undefined && values.only !== name) continue;
  console.log(`\n=== ${name} (${file})`);
  const r = spawnSync(process.execPath, [join(here, file), ...args], { stdio: 'inherit', timeout: 180_000 });
  if (r.status !== 0) {
    failed++;
    console.error(`${name}: exited ${r.status ?? r.signal}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
