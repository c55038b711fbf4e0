// Is a TCP port already served (cold: at start, before listening, and in `doctor`)? A connect probe: a listener that
// accepts is there, whoever holds it and however it bound. Needed because a bind test alone can be fooled: two
// sockets that both set SO_REUSEPORT (uSockets does by default; another uWS program, an older slotrelay) share a port
// silently, each getting part of the connections. Refused or timed out: nothing serves it.
import { connect } from 'node:net';

/** A loopback probe settles in well under a millisecond; an address off this host may not answer at all. */
const PROBE_TIMEOUT_MS = 500;

/** Where to connect to reach a listener bound to `host` (a wildcard is reached on loopback). */
function probeHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host.replace(/^\[|\]$/g, '');
}

export function isPortServed(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: probeHost(host), port });
    const done = (served: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(served);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}
