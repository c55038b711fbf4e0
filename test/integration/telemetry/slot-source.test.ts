// Slot source of the real telemetry thread: slotSubscribe while the WebSocket is up, getSlot polling while it is
// down. The thread talks to the localnet through two proxies in this process: an HTTP one that counts getSlot calls,
// and a TCP one in front of the PubSub port that the test kills (sockets destroyed, listener closed: reconnects are
// refused) and later restores. While it is down the snapshot keeps advancing with the cluster, by polling.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { SnapshotReader } from '../../../src/telemetry/snapshot.js';
import { TelemetryThread } from '../../../src/telemetry/telemetry-thread.js';
import { distUrl, ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';
import { waitForValue } from '../../helpers/wait-for.js';

let localnet: Localnet;
let thread: TelemetryThread;
let reader: SnapshotReader;
let rpcProxy: http.Server;
let wsProxy: net.Server;
let wsPort = 0;
const wsSockets = new Set<net.Socket>();
let getSlotCalls = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function listenWsProxy(port: number): Promise<void> {
  const target = new URL(localnet.wsUrl);
  wsProxy = net.createServer((client) => {
    const up = net.connect(Number(target.port), target.hostname);
    for (const s of [client, up]) {
      wsSockets.add(s);
      s.on('close', () => wsSockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(up).pipe(client);
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  return new Promise((resolve) => wsProxy.listen(port, '127.0.0.1', () => resolve()));
}

function killWsProxy(): Promise<void> {
  for (const s of wsSockets) s.destroy();
  return new Promise((resolve) => wsProxy.close(() => resolve()));
}

beforeAll(async () => {
  ensureDistFresh();
  localnet = await startLocalnet({ validators: 3, slotMs: 100 });
  rpcProxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (body.includes('"getSlot"')) getSlotCalls++;
      fetch(localnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((r) => rpcProxy.listen(0, '127.0.0.1', () => r()));
  await listenWsProxy(0);
  wsPort = (wsProxy.address() as net.AddressInfo).port;
  const rpcPort = (rpcProxy.address() as net.AddressInfo).port;
  const t = configSchema.parse({ telemetry: { slotPollIntervalMs: 100, probe: { enabled: false }, horizonSlots: 50, wsUrl: `ws://127.0.0.1:${wsPort}` } }).telemetry;
  thread = new TelemetryThread({
    telemetry: t,
    rpcUrl: `http://127.0.0.1:${rpcPort}`,
    routes: { direct: true, staticPeers: [], jito: false },
    logLevel: 'warn',
    log: createLogger('silent', 'test'),
    workerFile: new URL(distUrl('workers/telemetry-worker.js')),
  });
  thread.start();
  reader = new SnapshotReader(thread.snapshot);
});

afterAll(async () => {
  await thread?.stop();
  rpcProxy?.closeAllConnections();
  rpcProxy?.close();
  for (const s of wsSockets) s.destroy();
  wsProxy?.close();
  await localnet?.stop();
});

/** Snapshots over `ms`: how far they advanced and how closely they followed the cluster. */
async function follow(ms: number): Promise<{ generations: number; slots: number; maxLag: number; getSlot: number }> {
  const g0 = reader.current()!.generation;
  const s0 = reader.current()!.snapshotSlot;
  const c0 = getSlotCalls;
  let maxLag = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    maxLag = Math.max(maxLag, localnet.clock.current - reader.current()!.snapshotSlot);
    await sleep(25);
  }
  const v = reader.current()!;
  return { generations: v.generation - g0, slots: v.snapshotSlot - s0, maxLag, getSlot: getSlotCalls - c0 };
}

describe('telemetry slot source', () => {
  it('subscribed: slots arrive over the WebSocket and getSlot is not polled', async () => {
    await waitForValue('a snapshot', () => reader.current());
    await waitForValue('the subscription', () => wsSockets.size >= 2);
    await sleep(300); // the polls made before the subscription was up have returned
    const r = await follow(1_500);
    expect(r.slots).toBeGreaterThanOrEqual(10); // 100 ms slots
    expect(r.generations).toBeGreaterThanOrEqual(10);
    expect(r.getSlot).toBe(0);
    expect(r.maxLag).toBeLessThanOrEqual(3);
  });

  it('WebSocket killed and refused: slots keep advancing through getSlot polling', async () => {
    await killWsProxy();
    await sleep(300);
    const r = await follow(2_000);
    expect(r.slots).toBeGreaterThanOrEqual(12);
    expect(r.generations).toBeGreaterThanOrEqual(8);
    expect(r.getSlot).toBeGreaterThanOrEqual(10); // every slotPollIntervalMs (100 ms)
    expect(r.maxLag).toBeLessThanOrEqual(5);
    expect(Date.now() - reader.current()!.generatedAtUnixMs).toBeLessThan(1_000);
  });

  it('WebSocket back: the thread resubscribes and polling stops', async () => {
    await listenWsProxy(wsPort);
    await waitForValue('the resubscription', () => wsSockets.size >= 2, 15_000); // reconnect backoff is at most 5 s
    await sleep(300);
    const r = await follow(1_000);
    expect(r.getSlot).toBe(0);
    expect(r.slots).toBeGreaterThanOrEqual(6);
  });
});
