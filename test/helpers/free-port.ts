// A TCP port on 127.0.0.1 that nothing listens on right now (bound to port 0, read, released): for a server the test
// starts later on a known port, or a "connection refused" target. Cold, test-only.
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
