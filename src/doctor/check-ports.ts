// Doctor check `ports` (cold): every configured listener's address is free now: the JSON-RPC host, its PubSub port,
// the relay host, the status page (TCP) and the QUIC ingress (UDP). A TCP port is first probed with a connect (a
// listener that answers is there, even one a bind test would share with SO_REUSEPORT), then bound and closed at
// once, as `start` would bind it. Run before the first start (or with the relay stopped): a running relay holds its
// own ports. The list of listeners is `start`'s own (src/config/listeners.ts).
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { configuredListeners } from '../config/listeners.js';
import type { Config } from '../config/schema.js';
import { listenerFix, type ListenerSpec } from '../native/listen-failure.js';
import { describePortHolders } from '../native/port-holder.js';
import { isPortServed } from '../native/port-served.js';
import { fail, pass, skip, type Finding } from './finding.js';

/** What a connect probe that was answered is reported as (no errno: nothing failed, something is there). */
const SERVED = 'SERVED';

/** null when the address can be bound; else the error code (EADDRINUSE, EACCES, EADDRNOTAVAIL...). */
function tryBind(l: ListenerSpec): Promise<string | null> {
  return new Promise((resolve) => {
    if (l.proto === 'udp') {
      const s = createSocket(l.host.includes(':') ? 'udp6' : 'udp4');
      s.once('error', (e: NodeJS.ErrnoException) => {
        s.close();
        resolve(e.code ?? e.message);
      });
      s.bind({ address: l.host, port: l.port, exclusive: true }, () => s.close(() => resolve(null)));
      return;
    }
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    srv.listen({ host: l.host, port: l.port, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

async function probe(l: ListenerSpec): Promise<string | null> {
  if (l.proto === 'tcp' && (await isPortServed(l.host, l.port))) return SERVED;
  return tryBind(l);
}

const WHY: Readonly<Record<string, string>> = {
  [SERVED]: 'in use: a listener already answers there (a relay already running holds its own ports)',
  EADDRINUSE: 'in use by another process (a relay already running holds its own ports)',
  EACCES: 'a privileged port (< 1024) and this user may not bind it',
  EADDRNOTAVAIL: 'that address is not on any interface of this host',
};

export async function checkPorts(config: Readonly<Config>): Promise<Finding> {
  const id = 'ports';
  const listeners = configuredListeners(config);
  if (listeners.length === 0) return skip(id, 'no fixed port configured (every listener off or on port 0)');
  const results = await Promise.all(listeners.map(async (l) => ({ l, err: await probe(l) })));
  const shown = (l: ListenerSpec): string => `${l.field} ${l.proto.toUpperCase()} ${l.host}:${l.port}`;
  const taken = (err: string): boolean => err === SERVED || err === 'EADDRINUSE';
  const data = {
    listeners: results.map((r) => ({ name: r.l.field, kind: r.l.kind, proto: r.l.proto, host: r.l.host, port: r.l.port, free: r.err === null, ...(r.err !== null ? { error: r.err } : {}) })),
  };
  const bad = results.filter((r) => r.err !== null);
  if (bad.length === 0) return pass(id, `free: ${listeners.map(shown).join(', ')}`, data);
  // Who holds a taken port, where this user can see it (src/native/port-holder.ts).
  const detail = bad.map((r) => `${shown(r.l)}: ${WHY[r.err!] ?? r.err}${taken(r.err!) ? `, ${describePortHolders(r.l.proto, r.l.port)}` : ''}`).join('; ');
  // The status page's port first: several relays on one host collide there (the default 8890), and its fix differs.
  const admin = bad.find((r) => r.l.kind === 'admin' && taken(r.err!));
  const others = bad.filter((r) => r !== admin);
  const fixes: string[] = [];
  if (admin !== undefined) fixes.push(listenerFix(admin.l));
  if (others.length > 0) {
    fixes.push(`find the holder with \`ss -ltnup 'sport = :${others[0]!.l.port}'\` and stop it, or change ${others.map((r) => r.l.field).join(', ')} in the config`);
  }
  return fail(id, detail, fixes.join('; '), data);
}
