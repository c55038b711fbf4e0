// A test region's view of the one localnet, "oneWayMs" away: a UDP forwarder per validator that delays every
// datagram by oneWayMs in each direction (so a QUIC handshake from this region takes ~2 x oneWayMs), and a JSON-RPC
// proxy for the relay's telemetry.rpcUrl that forwards everything to the localnet but answers getClusterNodes with
// the forwarders as the validators' tpuQuic. Three relays on loopback thereby measure three different pings to the
// same leaders with their real handshake probe, as relays in three regions would.
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

class UdpDelayForwarder {
  readonly sock: Socket;
  /** Client "ip:port" -> our socket towards the target for that client. */
  private readonly flows = new Map<string, Socket>();
  private closed = false;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly delayMs: number,
  ) {
    this.sock = createSocket('udp4');
    this.sock.on('message', (msg, rinfo) => {
      const flow = this.flow(rinfo.address, rinfo.port);
      setTimeout(() => !this.closed && flow.send(msg, this.targetPort, this.targetHost), this.delayMs);
    });
  }

  private flow(host: string, port: number): Socket {
    const k = `${host}:${port}`;
    let s = this.flows.get(k);
    if (s === undefined) {
      s = createSocket('udp4');
      s.on('message', (msg) => setTimeout(() => !this.closed && this.sock.send(msg, port, host), this.delayMs));
      s.on('error', () => undefined);
      s.bind(0, '127.0.0.1');
      this.flows.set(k, s);
    }
    return s;
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', () => r()));
    return `127.0.0.1:${(this.sock.address() as AddressInfo).port}`;
  }

  close(): void {
    this.closed = true;
    for (const s of this.flows.values()) s.close();
    this.sock.close();
  }
}

export class RegionPath {
  private readonly forwarders: UdpDelayForwarder[] = [];
  private server: Server | null = null;
  /** The proxy's URL: the relay's telemetry.rpcUrl. */
  rpcUrl = '';

  private constructor(readonly oneWayMs: number) {}

  static async start(localnetRpcUrl: string, validators: readonly { tpuQuic: string }[], oneWayMs: number): Promise<RegionPath> {
    const p = new RegionPath(oneWayMs);
    const byTpu = new Map<string, string>();
    for (const v of validators) {
      const i = v.tpuQuic.lastIndexOf(':');
      const f = new UdpDelayForwarder(v.tpuQuic.slice(0, i), Number(v.tpuQuic.slice(i + 1)), oneWayMs);
      p.forwarders.push(f);
      byTpu.set(v.tpuQuic, await f.listen());
    }
    p.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        void fetch(localnetRpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
          async (up) => {
            let text = await up.text();
            if (body.includes('"getClusterNodes"')) {
              const j = JSON.parse(text) as { result?: { tpuQuic?: string | null }[] };
              for (const n of j.result ?? []) if (n.tpuQuic != null && byTpu.has(n.tpuQuic)) n.tpuQuic = byTpu.get(n.tpuQuic)!;
              text = JSON.stringify(j);
            }
            res.writeHead(up.status, { 'content-type': 'application/json' }).end(text);
          },
          () => res.writeHead(502).end(),
        );
      });
    });
    await new Promise<void>((r) => p.server!.listen(0, '127.0.0.1', () => r()));
    p.rpcUrl = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
    return p;
  }

  async stop(): Promise<void> {
    for (const f of this.forwarders) f.close();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
