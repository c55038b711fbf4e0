// A TCP proxy on loopback a test can cut or freeze (for streams a test must take down without stopping the server
// behind them): cut() closes every connection and refuses new ones until restore(); freeze() keeps the connections
// open but stops forwarding the server's bytes (a stalled stream), thaw() forwards again.
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  readonly url: string;
  cut(): void;
  restore(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const held: (() => void)[] = [];
  const onConnection = (client: net.Socket): void => {
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (frozen) held.push(() => client.write(d));
      else client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  };
  let server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    cut(): void {
      server.close();
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    async restore(): Promise<void> {
      server = net.createServer(onConnection);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    freeze(): void {
      frozen = true;
    },
    thaw(): void {
      frozen = false;
      for (const f of held.splice(0)) f();
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
