// One region's UDP path to one validator's TPU listener (localnet process, main thread; per datagram but only at
// test rates: a localnet is a bench). Listens on its own port, forwards every datagram to the listener and every
// answer back, each delayed by the region's one-way delay, so a sender using this address sees the validator that
// far away (a QUIC handshake ~2 x more). Each sender address gets its own socket towards the listener, so the
// listener (and its QoS) sees one peer per sender, as without the forwarder. The delay can change while it runs
// (tests: a path that gets faster); datagrams already queued keep theirs, so nothing is reordered.
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/** A FIFO of datagrams due at given times, one timer for all (the delay only changes rarely). */
class DelayQueue {
  private readonly items: { due: number; send: () => void }[] = [];
  private timer: NodeJS.Timeout | null = null;

  push(delayMs: number, send: () => void): void {
    if (delayMs <= 0 && this.items.length === 0) return send();
    // Never before the one queued ahead of it: a lowered delay must not reorder the path.
    const last = this.items.length === 0 ? 0 : this.items[this.items.length - 1].due;
    this.items.push({ due: Math.max(performance.now() + delayMs, last), send });
    this.arm();
  }

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.items.length = 0;
  }

  private arm(): void {
    if (this.timer !== null || this.items.length === 0) return;
    this.timer = setTimeout(this.drain, Math.max(0, this.items[0].due - performance.now()));
  }

  private readonly drain = (): void => {
    this.timer = null;
    const now = performance.now();
    let i = 0;
    while (i < this.items.length && this.items[i].due <= now) this.items[i++].send();
    this.items.splice(0, i);
    this.arm();
  };
}

export class UdpDelayForwarder {
  private readonly sock: Socket;
  private readonly flows = new Map<string, Socket>();
  private readonly toTarget = new DelayQueue();
  private readonly toSender = new DelayQueue();
  private closed = false;

  constructor(
    private readonly host: string,
    private readonly targetHost: string,
    private readonly targetPort: number,
    /** One-way delay (ms), each direction. */
    public oneWayDelayMs: number,
  ) {
    this.sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    this.sock.on('error', () => undefined);
    this.sock.on('message', (msg, rinfo) => {
      const flow = this.flow(rinfo.address, rinfo.port);
      this.toTarget.push(this.oneWayDelayMs, () => !this.closed && flow.send(msg, this.targetPort, this.targetHost));
    });
  }

  /** Bind an ephemeral port; returns "host:port", the address senders of this region use. */
  async listen(): Promise<string> {
    await new Promise<void>((r) => this.sock.bind(0, this.host, () => r()));
    return `${this.host}:${(this.sock.address() as AddressInfo).port}`;
  }

  close(): void {
    this.closed = true;
    this.toTarget.clear();
    this.toSender.clear();
    for (const s of this.flows.values()) s.close();
    this.flows.clear();
    this.sock.close();
  }

  private flow(host: string, port: number): Socket {
    const k = `${host}:${port}`;
    let s = this.flows.get(k);
    if (s === undefined) {
      s = createSocket(this.targetHost.includes(':') ? 'udp6' : 'udp4');
      s.on('message', (msg) => this.toSender.push(this.oneWayDelayMs, () => !this.closed && this.sock.send(msg, port, host)));
      s.on('error', () => undefined);
      s.bind(0, this.host);
      this.flows.set(k, s);
    }
    return s;
  }
}
