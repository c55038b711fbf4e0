// rpc route against the loopback fake upstream (run: `node dist/bench/egress/rpc-route.bench.js`; build first).
// Same process, so client and server share the cores: figures are a floor, useful to compare connection counts.
// Sends `count` transactions with at most `window` in flight and reports tx/s and send->answer latency.
import os from 'node:os';
import { build } from 'hdr-histogram-js';
import { RpcRoute } from '../../src/egress/worker-routes/rpc-route.js';
import type { TxView } from '../../src/egress/contract/route.js';
import { startFakeRpcUpstream } from '../../test/helpers/fake-upstream.js';
import { createLogger } from '../../src/log/logger.js';

const TX_BYTES = 1232;

async function run(connections: number, count: number, window: number): Promise<Record<string, number>> {
  const up = await startFakeRpcUpstream();
  const route = new RpcRoute({ endpoints: [up.url], timeoutMs: 5_000, connections }, createLogger('silent', 'bench'));
  const sab = new SharedArrayBuffer(TX_BYTES);
  const bytes = Buffer.from(sab).fill(5);
  const view: TxView = { bytes, sab, byteOffset: 0, length: TX_BYTES, signatureOffset: 1, keyId: 0, maxRetries: -1, traceId: 'b', receivedAtMs: 0 };
  const h = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  let started = 0;
  let sent = 0;
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const launch = (): void => {
      if (started >= count) return;
      started++;
      const s = performance.now();
      void Promise.resolve(route.send(view)).then((o) => {
        h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
        if (o === 'sent') sent++;
        if (h.totalCount === count) resolve();
        else launch();
      });
    };
    for (let i = 0; i < window; i++) launch();
  });
  const secs = (performance.now() - t0) / 1000;
  await route.close();
  await up.close();
  return { connections, window, 'tx/s': Math.round(count / secs), sent, 'p50 us': h.getValueAtPercentile(50), 'p99 us': h.getValueAtPercentile(99), 'tcp conns': up.connections() };
}

console.log(`node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const rows = [];
for (const [connections, window] of [[1, 1], [4, 64], [16, 64], [16, 256]] as const) rows.push(await run(connections, 4_000, window));
console.table(rows);
