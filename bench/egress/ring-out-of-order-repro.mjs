// Repro (not a bench): records completed out of order (half sync, half async with random delays) are dispatched to
// the route more than once by the ring consumer loop. Found while measuring the static route. Expected: calls == sent,
// dup == 0. Observed 2025-xx: { sent: 4913, calls: 8229, dup: 3316 }. Run after npx tsc: node bench/egress/ring-out-of-order-repro.mjs async
import { configSchema } from '../../dist/src/config/schema.js';
import { runEgressConsumer } from '../../dist/src/egress/consumer-loop.js';
import { createLogger } from '../../dist/src/log/logger.js';
import { createWorkerCounters } from '../../dist/src/metrics/worker-counters.js';
import { ROUTE_COUNT, ROUTE_IDS } from '../../dist/src/shm/layout.js';
import { createRing, requestStop, RingProducer } from '../../dist/src/shm/ring.js';
const log = createLogger('silent','x');
const config = configSchema.parse({});
let calls = 0; const seen = new Map();
const mode = process.argv[2];
const route = { id: 3, name: 'static', send(t) { calls++; const n = t.bytes.readUInt32LE(0); seen.set(n,(seen.get(n)??0)+1); if (mode==='async') { if (Math.random()<0.5) return 'sent'; return new Promise(r=>setTimeout(()=>r('sent'), Math.random()*800)); } return 'sent'; }, close: async()=>{} };
const routes = new Array(ROUTE_COUNT).fill(null); routes[3] = route;
const ring = createRing(4096, 1232); const p = new RingProducer(ring);
const loop = runEgressConsumer({ ringIndex: 0, ring, counters: createWorkerCounters(1), config, attempt: 0 }, { routes, log });
const tx = Buffer.alloc(1232, 3);
let sent = 0; const t0 = performance.now();
while (performance.now() - t0 < 1000) { const due = Math.floor((performance.now()-t0)*5); while (sent < due) { const off = p.reserve(); if (off<0) break; tx.writeUInt32LE(sent,0); p.bytes.set(tx, off); p.publish(tx.length,0,1<<3,-1,Date.now(),'b'); sent++; } await new Promise(r=>setTimeout(r,1)); }
await new Promise(r=>setTimeout(r,2000));
requestStop(ring); await loop;
let dup=0; for (const v of seen.values()) if (v>1) dup++;
console.log(mode, {sent, calls, distinct: seen.size, dup});
process.exit(0);
