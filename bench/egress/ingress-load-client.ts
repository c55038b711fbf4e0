// Bench helper (its own process, so that its quiche client is not a second quiche user in the bench's process and its
// CPU shows apart): keeps a QUIC ingress listener busy for quic-thread.bench.ts. C connections (src/ingress/
// ingress-client.ts, certificate CN "bench"), uni streams of TX_BYTES bytes + FIN, offered at `rate` per second in
// 1 ms ticks (0 = as fast as the listener takes them: each connection keeps up to WINDOW streams waiting for credit
// or room). Prints one JSON line {event: 'ready'} once connected, runs until a line arrives on stdin (or its own
// limit), then prints {event: 'done', written, seconds, offeredPerS} and exits.
// Run by the bench: node dist/bench/egress/ingress-load-client.js <host> <port> <rate> [connections] [maxMs]
import { randomFillSync } from 'node:crypto';
import { createInterface } from 'node:readline';
import { IngressClient } from '../../src/client/quic/ingress-client.js';
import { createIdentityCertificate } from '../../src/quic/identity-certificate.js';
import { generateKeypairSecret } from '../../src/egress/quic/identity.js';

const host = process.argv[2] ?? '127.0.0.1';
const port = Number(process.argv[3]);
const rate = Number(process.argv[4] ?? 0);
const connections = Number(process.argv[5] ?? 2);
const maxMs = Number(process.argv[6] ?? 60_000);
const TX_BYTES = 1232;
/** Streams per connection written or waiting (the listener's default MAX_STREAMS is 128). */
const WINDOW = 256;

const tx = Buffer.alloc(TX_BYTES);
randomFillSync(tx);
tx[0] = 1;
const cert = await createIdentityCertificate(generateKeypairSecret(), 'bench');
const clients = await Promise.all(Array.from({ length: connections }, () => IngressClient.connect({ host, port, certificate: cert, idleTimeoutMs: 30_000 })));
let written = 0;
let issued = 0;
let stop = false;
const onWritten = (): void => {
  written++;
};
process.stdout.write(JSON.stringify({ event: 'ready' }) + '\n');
createInterface({ input: process.stdin }).once('line', () => (stop = true));
const t0 = performance.now();
while (!stop && performance.now() - t0 < maxMs) {
  const target = rate > 0 ? Math.floor(((performance.now() - t0) * rate) / 1000) : Infinity;
  // One stream per connection in turn, until the schedule is met or every connection's window is full.
  let progress = true;
  while (issued < target && progress) {
    progress = false;
    for (const c of clients) {
      if (issued >= target) break;
      if (c.backlog >= WINDOW) continue;
      void c.sendUni(tx).then(onWritten);
      issued++;
      progress = true;
    }
  }
  // 1 ms ticks (the sends above go out and credit comes back meanwhile; a full window refills by 2 x 256 per tick).
  await new Promise<void>((resolve) => setTimeout(resolve, 1));
}
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ event: 'done', written, issued, seconds: Math.round(seconds * 100) / 100, offeredPerS: rate }) + '\n');
for (const c of clients) c.close();
setTimeout(() => process.exit(0), 100);
