// Doctor check `ports` (cold): every configured listener's address can be bound now: the JSON-RPC host, its PubSub
// port, the relay host (TCP) and the QUIC ingress (UDP). Each is bound and closed at once, as `start` would bind it.
// Run before the first start (or with the relay stopped): a running relay holds its own ports.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Config } from '../config/schema.js';
import { fail, pass, skip, type Finding } from './finding.js';

export interface Listener {
  readonly name: string;
  readonly proto: 'tcp' | 'udp';
  readonly host: string;
  readonly port: number;
}

export function configuredListeners(c: Readonly<Config>): Listener[] {
  const out: Listener[] = [];
  if (c.rpcHost.enabled) {
    out.push({ name: 'rpcHost.port', proto: 'tcp', host: c.rpcHost.host, port: c.rpcHost.port });
    if (c.jsonRpc.pubsub.enabled) out.push({ name: 'jsonRpc.pubsub.port', proto: 'tcp', host: c.rpcHost.host, port: c.jsonRpc.pubsub.port ?? (c.rpcHost.port === 0 ? 0 : c.rpcHost.port + 1) });
  }
  if (c.relayHost.enabled) out.push({ name: 'relayHost.port', proto: 'tcp', host: c.relayHost.host, port: c.relayHost.port });
  if (c.relayHost.quicPort > 0) out.push({ name: 'relayHost.quicPort', proto: 'udp', host: c.relayHost.host, port: c.relayHost.quicPort });
  // Port 0 (and the QUIC ingress's -1) take a free port at start: nothing to check.
  return out.filter((l) => l.port > 0);
}

/** null when the address can be bound; else the error code (EADDRINUSE, EACCES, EADDRNOTAVAIL...). */
function tryBind(l: Listener): Promise<string | null> {
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

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: 'in use by another process (a relay already running holds its own ports)',
  EACCES: 'a privileged port (< 1024) and this user may not bind it',
  EADDRNOTAVAIL: 'that address is not on any interface of this host',
};

export async function checkPorts(config: Readonly<Config>): Promise<Finding> {
  const id = 'ports';
  const listeners = configuredListeners(config);
  if (listeners.length === 0) return skip(id, 'no fixed port configured (every listener off or on port 0)');
  const results = await Promise.all(listeners.map(async (l) => ({ l, err: await tryBind(l) })));
  const shown = (l: Listener): string => `${l.name} ${l.proto.toUpperCase()} ${l.host}:${l.port}`;
  const data = { listeners: results.map((r) => ({ ...r.l, free: r.err === null, ...(r.err !== null ? { error: r.err } : {}) })) };
  const bad = results.filter((r) => r.err !== null);
  if (bad.length === 0) return pass(id, `free: ${listeners.map(shown).join(', ')}`, data);
  return fail(
    id,
    bad.map((r) => `${shown(r.l)}: ${WHY[r.err!] ?? r.err}`).join('; '),
    `find the holder with \`ss -ltnup 'sport = :${bad[0]!.l.port}'\` and stop it, or change ${bad.map((r) => r.l.name).join(', ')} in the config`,
    data,
  );
}
