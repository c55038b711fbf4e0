// Every listener a config opens, with the field that sets its port (cold: `start`'s check before listening and
// `doctor`'s ports check read the same list). Port 0 (and the QUIC ingress's -1) take a free port: not listed.
import type { ListenerSpec } from '../native/listen-failure.js';
import type { Config } from './schema.js';

/** The PubSub port: jsonRpc.pubsub.port, else rpcHost.port + 1 (where web3.js's Connection looks for it). */
export function pubsubPort(c: Readonly<Config>): number {
  return c.jsonRpc.pubsub.port ?? (c.rpcHost.port === 0 ? 0 : c.rpcHost.port + 1);
}

export function configuredListeners(c: Readonly<Config>): ListenerSpec[] {
  const out: ListenerSpec[] = [];
  if (c.rpcHost.enabled) {
    out.push({ kind: 'rpc', field: 'rpcHost.port', proto: 'tcp', host: c.rpcHost.host, port: c.rpcHost.port });
    if (c.jsonRpc.pubsub.enabled) {
      const field = c.jsonRpc.pubsub.port === undefined ? 'jsonRpc.pubsub.port (default rpcHost.port + 1)' : 'jsonRpc.pubsub.port';
      out.push({ kind: 'pubsub', field, proto: 'tcp', host: c.rpcHost.host, port: pubsubPort(c) });
    }
  }
  if (c.relayHost.enabled) {
    out.push({ kind: 'relay', field: 'relayHost.port', proto: 'tcp', host: c.relayHost.host, port: c.relayHost.port });
    if (c.relayHost.quicPort > 0) out.push({ kind: 'quic', field: 'relayHost.quicPort', proto: 'udp', host: c.relayHost.host, port: c.relayHost.quicPort });
  }
  if (c.admin.enabled) out.push({ kind: 'admin', field: 'admin.port', proto: 'tcp', host: c.admin.host, port: c.admin.port });
  return out.filter((l) => l.port > 0);
}
