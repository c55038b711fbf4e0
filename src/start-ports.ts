// Before `slotrelay start` opens anything (cold, main thread, once): is any fixed TCP port of the config already
// served? A connect probe per listener (src/native/port-served.ts). The binds would refuse a port held without
// SO_REUSEPORT anyway (src/native/listen-exclusive.ts); this catches, before the localnet child and the threads start,
// every holder that answers, including one that shares ports (SO_REUSEPORT: another uWS program, an older relay) and
// a second relay on the status page's default port. UDP (the QUIC ingress) has no probe: its bind decides.
import { configuredListeners } from './config/listeners.js';
import type { Config } from './config/schema.js';
import { ListenFailure } from './native/listen-failure.js';
import { isPortServed } from './native/port-served.js';

export async function refuseServedPorts(config: Readonly<Config>): Promise<void> {
  const tcp = configuredListeners(config).filter((l) => l.proto === 'tcp');
  const served = await Promise.all(tcp.map((l) => isPortServed(l.host, l.port)));
  const first = served.indexOf(true);
  if (first >= 0) throw new ListenFailure(tcp[first]!, 'the port is already served by another process');
}
