// Free ports on 127.0.0.1 (TCP and UDP), bound to port 0, read, released. Cold, test-only.
// freePort: a TCP port nothing listens on right now: for a server the test starts later on a known port, or a
// "connection refused" target.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A UDP port on 127.0.0.1 that nothing is bound to right now: a datagram sent there draws ICMP port unreachable. */
export async function freeUdpPort(): Promise<number> {
  const { createSocket } = await import('node:dgram');
  const s = createSocket('udp4');
  await new Promise<void>((res, rej) => {
    s.once('error', rej);
    s.bind(0, '127.0.0.1', () => res());
  });
  const port = s.address().port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}
