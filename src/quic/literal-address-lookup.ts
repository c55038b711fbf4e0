// The address lookup of the unconnected QUIC sockets (any thread that owns a listener; HOT: once per datagram sent).
// Node's dgram resolves the address of every unconnected send() with dns.lookup, and dns.lookup answers an IP literal
// on process.nextTick: each datagram then reaches the kernel only after the rest of the callback that sent it (measured
// in the quic-egress thread's profile: `processTicksAndRejections -> afterDns -> doSend`, 9% of its busy time, and a bidi
// acknowledgement leaving after the send to the leader that followed it in the same callback). Our listeners only ever
// send to the address a datagram came from, always an IP literal: answer those in the same call, anything else the
// default way.
import dns from 'node:dns';
import { isIP } from 'node:net';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/** dgram.createSocket's `lookup` option: IP literals at once, names through dns.lookup. */
export function literalAddressLookup(hostname: string, options: dns.LookupOneOptions | number, callback: LookupCallback): void {
  const family = isIP(hostname);
  if (family !== 0) {
    callback(null, hostname, family);
    return;
  }
  dns.lookup(hostname, typeof options === 'number' ? { family: options } : options, callback);
}
