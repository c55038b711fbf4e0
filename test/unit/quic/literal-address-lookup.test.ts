// The listeners' address lookup (src/quic/literal-address-lookup.ts): a datagram sent to an IP literal from an
// unconnected socket reaches the kernel in the send() call itself, so it is ahead of anything the same callback sends
// afterwards (the QUIC ingress's acknowledgement before the send to the leader). Observed from a real receiving socket:
// the order in which two sockets' datagrams arrive on loopback.
import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { literalAddressLookup } from '../../../src/quic/literal-address-lookup.js';

function bound(sock: dgram.Socket): Promise<number> {
  return new Promise((resolve) => sock.bind(0, '127.0.0.1', () => resolve(sock.address().port)));
}

/** Per round: `first` via the unconnected socket, then `second` via a connected one, in one synchronous block. */
async function arrivalOrder(lookup: typeof literalAddressLookup | undefined, rounds: number): Promise<string[]> {
  const receiver = dgram.createSocket('udp4');
  const port = await bound(receiver);
  const unconnected = dgram.createSocket(lookup === undefined ? { type: 'udp4' } : { type: 'udp4', lookup });
  await bound(unconnected);
  const connected = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => connected.connect(port, '127.0.0.1', () => resolve()));
  const got: string[] = [];
  const all = new Promise<void>((resolve) =>
    receiver.on('message', (m) => {
      got.push(m.toString());
      if (got.length === rounds * 2) resolve();
    }),
  );
  for (let i = 0; i < rounds; i++) {
    unconnected.send(Buffer.from('first'), port, '127.0.0.1');
    connected.send(Buffer.from('second'));
    await new Promise((r) => setTimeout(r, 2));
  }
  await all;
  for (const s of [receiver, unconnected, connected]) s.close();
  return got;
}

describe('literal address lookup', () => {
  it('an unconnected send to an IP literal leaves before a later send of the same callback', async () => {
    const got = await arrivalOrder(literalAddressLookup, 20);
    expect(got).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 'first' : 'second')));
  });

  it("(control) with Node's default lookup the same send is deferred behind the connected one", async () => {
    const got = await arrivalOrder(undefined, 5);
    expect(got.slice(0, 2)).toEqual(['second', 'first']);
  });

  it('answers literals itself and resolves names through dns.lookup', async () => {
    const literal = await new Promise<[string, number]>((resolve, reject) =>
      literalAddressLookup('::1', 6, (err, address, family) => (err ? reject(err) : resolve([address, family]))),
    );
    expect(literal).toEqual(['::1', 6]);
    const named = await new Promise<[string, number]>((resolve, reject) =>
      literalAddressLookup('localhost', 4, (err, address, family) => (err ? reject(err) : resolve([address, family]))),
    );
    expect(named).toEqual(['127.0.0.1', 4]);
  });
});
