// A listener that cannot be opened at start (cold): the one error every listener throws (JSON-RPC host, PubSub, relay
// host, QUIC ingress, status page), so `slotrelay start` can say which port, for what, who holds it where the OS says,
// and what to change, then exit with the start-failure code (1: README, "Running it under a supervisor").
import { describePortHolders } from './port-holder.js';

export type ListenerKind = 'rpc' | 'pubsub' | 'relay' | 'quic' | 'admin';

export interface ListenerSpec {
  readonly kind: ListenerKind;
  /** The config field that sets the port (the operator's handle on it). */
  readonly field: string;
  readonly proto: 'tcp' | 'udp';
  readonly host: string;
  readonly port: number;
}

const WHAT: Readonly<Record<ListenerKind, string>> = {
  rpc: 'the JSON-RPC host',
  pubsub: 'PubSub',
  relay: 'the relay host',
  quic: 'the QUIC ingress',
  admin: 'the status page (admin listener)',
};

/** What to change: the status page's fixed default port is the one several relays on a host collide on. */
export function listenerFix(l: ListenerSpec): string {
  if (l.kind === 'admin') {
    return 'several relays on one host need one admin.port each: set admin.port (0 takes a free one), or admin.enabled: false (docs/deployment.md)';
  }
  return `stop the holder, or change ${l.field} in the config`;
}

/** uWS reports a failed listen as `false`, without the errno: these are the causes it can have. */
export const BIND_FAILED = 'the bind failed (the port in use, a privileged port, or an address not on this host)';

export class ListenFailure extends Error {
  constructor(
    readonly listener: ListenerSpec,
    /** Why, as far as known: "already served" (a connect probe answered) or the binder's reason. */
    readonly why: string,
  ) {
    const holder = holderNote(listener);
    super(`cannot listen on ${listener.proto} ${listener.host}:${listener.port} for ${WHAT[listener.kind]} (${listener.field}): ${why}${holder}; ${listenerFix(listener)}`);
    this.name = 'ListenFailure';
  }
}

/** ", held by pid N (comm)" for a fixed port; nothing for port 0 (the kernel chose, nobody holds it). */
function holderNote(spec: ListenerSpec): string {
  return spec.port > 0 ? `, ${describePortHolders(spec.proto, spec.port)}` : '';
}
