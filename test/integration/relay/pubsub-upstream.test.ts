// The relay's PubSub against a scripted upstream PubSub (a `ws` server in this process, at upstream.wsUrl), for
// what the localnet cannot be made to do on demand (docs/pubsub.md): identical subscriptions share one upstream
// subscription and notifications reach each client byte for byte with only its id changed; the last client leaving
// unsubscribes upstream; the upstream connection dropping closes subscribed clients with 1013 and web3.js comes
// back by itself; a client that does not read is closed with 1008; an upstream that is silent, refuses or never
// completes the handshake answers -32005 within upstream.requestTimeoutMs, and the next subscribe recovers.
import { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { freePort } from '../../helpers/free-port.js';

const TIMEOUT_MS = 1_000;
const PUBKEY = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';

interface UpstreamSub {
  readonly id: number;
  readonly method: string;
  readonly params: unknown;
  readonly conn: WebSocket;
}

/** A scripted upstream PubSub: answers subscribes with ids from 500, records every call, notifies on demand. */
class FakeUpstream {
  server!: WebSocketServer;
  readonly calls: { method: string; params: unknown }[] = [];
  readonly subs = new Map<number, UpstreamSub>();
  silent = false;
  private nextId = 500;
  private slotTimer: NodeJS.Timeout | null = null;
  private slot = 1000;

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: this.port });
    await new Promise<void>((r) => this.server.once('listening', () => r()));
    this.server.on('connection', (conn) => {
      conn.on('message', (data) => {
        const m = JSON.parse(data.toString()) as { id: number; method: string; params: unknown[] };
        this.calls.push({ method: m.method, params: m.params });
        if (this.silent) return;
        if (m.method.endsWith('Unsubscribe')) {
          const ok = this.subs.delete(m.params[0] as number);
          conn.send(JSON.stringify(ok ? { jsonrpc: '2.0', result: true, id: m.id } : { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid subscription id.' }, id: m.id }));
          return;
        }
        const id = this.nextId++;
        this.subs.set(id, { id, method: m.method, params: m.params, conn });
        conn.send(`{"jsonrpc":"2.0","result":${id},"id":${m.id}}`);
      });
      conn.on('close', () => {
        for (const [id, s] of this.subs) if (s.conn === conn) this.subs.delete(id);
      });
    });
    this.slotTimer = setInterval(() => {
      this.slot++;
      for (const s of this.subs.values()) if (s.method === 'slotSubscribe') this.notify(s.id, 'slotNotification', `{"parent":${this.slot - 1},"root":${this.slot - 32},"slot":${this.slot}}`);
    }, 100);
  }

  ofMethod(method: string): UpstreamSub[] {
    return [...this.subs.values()].filter((s) => s.method === method);
  }

  notify(id: number, method: string, resultJson: string): string {
    const text = `{"jsonrpc":"2.0","method":"${method}","params":{"result":${resultJson},"subscription":${id}}}`;
    this.subs.get(id)?.conn.send(text);
    return text;
  }

  /** Drop every connection without a close handshake (a crashed upstream). */
  dropConnections(): void {
    for (const c of this.server.clients) c.terminate();
  }

  async stop(): Promise<void> {
    if (this.slotTimer !== null) clearInterval(this.slotTimer);
    this.dropConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${relay.rpcUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

let relay: RelayHandle;
let http: FakeRpcUpstream;
let upstream: FakeUpstream;
let port: number;
const keyed = (): string => `${relay.wsUrl}/?key=${TEST_KEY}`;

beforeAll(async () => {
  http = await startFakeRpcUpstream();
  port = await freePort();
  upstream = new FakeUpstream(port);
  await upstream.start();
  relay = await startRelay({
    upstream: { rpcUrl: http.url, wsUrl: `ws://127.0.0.1:${port}/`, requestTimeoutMs: TIMEOUT_MS },
    routes: { rpc: { endpoints: [http.url] } },
    telemetry: { enabled: false },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop('SIGKILL');
  await upstream?.stop().catch(() => undefined);
  await http?.close();
});

describe('multiplexing onto the upstream', () => {
  it('shares one upstream subscription, forwards each notification byte for byte with the client\'s id, and unsubscribes upstream when the last client leaves', async () => {
    const a = await PubsubClient.open(keyed());
    const b = await PubsubClient.open(keyed());
    const params = [PUBKEY, { commitment: 'confirmed', encoding: 'base64' }];
    const idA = await a.subscribe('accountSubscribe', params);
    const idB = await b.subscribe('accountSubscribe', [PUBKEY, { encoding: 'base64', commitment: 'confirmed', minContextSlot: 5 }]);
    expect(idA).not.toBe(idB);
    // Sent upstream once, in canonical form.
    const subscribes = upstream.calls.filter((c) => c.method === 'accountSubscribe');
    expect(subscribes).toEqual([{ method: 'accountSubscribe', params: [PUBKEY, { commitment: 'confirmed', encoding: 'base64' }] }]);
    const [up] = upstream.ofMethod('accountSubscribe');

    // A u64 rentEpoch that JSON.parse would round, and a string that looks like the tail: both pass unchanged.
    const result =
      '{"context":{"slot":77},"value":{"data":["c3Vic2NyaXB0aW9uIjo1fX0=","base64"],"executable":false,"lamports":42,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":17}}';
    const sent = upstream.notify(up.id, 'accountNotification', result);
    const notes = (c: PubsubClient): string[] => c.raw.filter((t) => t.includes('accountNotification'));
    await waitFor('both notified', () => notes(a).length >= 1 && notes(b).length >= 1);
    expect(notes(a)).toEqual([sent.replace(`"subscription":${up.id}}}`, `"subscription":${idA}}}`)]);
    expect(notes(b)).toEqual([sent.replace(`"subscription":${up.id}}}`, `"subscription":${idB}}}`)]);
    expect(await metric('slotrelay_pubsub_upstream_subscriptions')).toBe(1);

    a.close();
    await a.closed;
    await new Promise((r) => setTimeout(r, 200));
    expect(upstream.calls.filter((c) => c.method === 'accountUnsubscribe')).toEqual([]);
    expect((await b.call('accountUnsubscribe', [idB])).result).toBe(true);
    await waitFor('upstream unsubscribe', () => upstream.calls.find((c) => c.method === 'accountUnsubscribe'));
    expect(upstream.calls.filter((c) => c.method === 'accountUnsubscribe')).toEqual([{ method: 'accountUnsubscribe', params: [up.id] }]);
    expect(await metric('slotrelay_pubsub_upstream_subscriptions')).toBe(0);
    b.close();
  });

  it('a client that goes away releases its upstream subscription', async () => {
    const c = await PubsubClient.open(keyed());
    const sig = bs58.encode(randomBytes(64));
    await c.subscribe('signatureSubscribe', [sig, { commitment: 'processed' }]);
    const [up] = upstream.ofMethod('signatureSubscribe');
    expect(up.params).toEqual([sig, { commitment: 'processed', enableReceivedNotification: false }]);
    c.ws.terminate(); // no close handshake: the relay notices the TCP close
    await waitFor('upstream signatureUnsubscribe', () => upstream.calls.find((x) => x.method === 'signatureUnsubscribe'));
    expect(upstream.calls.find((x) => x.method === 'signatureUnsubscribe')!.params).toEqual([up.id]);
  });
});

describe('the upstream connection dropping', () => {
  it('closes the clients holding subscriptions with 1013 upstream_disconnected; others stay; the next subscribe reconnects', async () => {
    const subscribed = await PubsubClient.open(keyed());
    const idle = await PubsubClient.open(keyed());
    await subscribed.subscribe('slotSubscribe');
    await subscribed.next((m) => m.method === 'slotNotification');
    upstream.dropConnections();
    expect(await subscribed.closed).toEqual({ code: 1013, reason: 'upstream_disconnected' });
    expect(idle.ws.readyState).toBe(WebSocket.OPEN);
    const again = await idle.subscribe('slotSubscribe');
    const note = await idle.next((m) => m.method === 'slotNotification');
    expect(note.params.subscription).toBe(again);
    idle.close();
  });

  it('web3.js reconnects and resubscribes by itself: onSlotChange resumes', async () => {
    const conn = new Connection(relay.rpcUrl, { httpHeaders: { 'x-api-key': TEST_KEY }, wsEndpoint: keyed() });
    const slots: number[] = [];
    const id = conn.onSlotChange((s) => slots.push(s.slot));
    await waitFor('slots', () => slots.length >= 2);
    upstream.dropConnections();
    const seen = slots.length;
    await waitFor('slots after the drop', () => slots.length >= seen + 3, undefined, 15_000);
    await conn.removeSlotChangeListener(id);
  });
});

/** An account notification of about `mib` MiB (base64 data), for subscription `id`. */
function bigAccount(i: number, mib: number): string {
  return `{"context":{"slot":${i}},"value":{"data":["${'A'.repeat(mib * 1024 * 1024)}","base64"],"executable":false,"lamports":1,"owner":"11111111111111111111111111111111","rentEpoch":0,"space":786432}}`;
}

describe('a client that reads slowly', () => {
  it('gets every large notification intact (uWS would drop the bytes of a large send the kernel does not take: src/rpc/pubsub/uws-send.ts)', async () => {
    const c = await PubsubClient.open(keyed());
    const errors: string[] = [];
    c.ws.on('error', (e) => errors.push(e.message));
    const id = await c.subscribe('accountSubscribe', [PUBKEY, { encoding: 'base64' }]);
    const [up] = upstream.ofMethod('accountSubscribe');
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    socket.pause(); // the kernel's buffers fill: what a busy or slow client looks like
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) sent.push(upstream.notify(up.id, 'accountNotification', bigAccount(i, 1)));
    await new Promise((r) => setTimeout(r, 500));
    socket.resume();
    await waitFor('8 notifications', () => c.raw.length >= 9 || errors.length > 0, undefined, 20_000);
    expect(errors).toEqual([]);
    expect(c.raw.slice(1)).toEqual(sent.map((t) => t.replace(`"subscription":${up.id}}}`, `"subscription":${id}}}`)));
    expect((await c.call('accountUnsubscribe', [id])).result).toBe(true);
    c.close();
  });
});

describe('a client that does not read', () => {
  it('is closed with 1008 slow_consumer instead of being buffered without bound', async () => {
    const c = await PubsubClient.open(keyed());
    const id = await c.subscribe('accountSubscribe', [PUBKEY]);
    expect(id).toEqual(expect.any(Number));
    const [up] = upstream.ofMethod('accountSubscribe');
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    for (let i = 0; i < 48; i++) upstream.notify(up.id, 'accountNotification', bigAccount(i, 1));
    await waitFor('a slow-consumer close', () => metric('slotrelay_pubsub_slow_consumer_closes_total'), (v) => v === 1, 20_000);
    socket.resume();
    expect(await c.closed).toEqual({ code: 1008, reason: 'slow_consumer' });
    await waitFor('its upstream subscription released', () => upstream.calls.find((x) => x.method === 'accountUnsubscribe' && (x.params as number[])[0] === up.id));
  });
});

describe('an upstream that does not serve', () => {
  it('silent: -32005 upstream_timeout within requestTimeoutMs', async () => {
    const c = await PubsubClient.open(keyed());
    upstream.silent = true;
    const t0 = Date.now();
    const answer = await c.call('rootSubscribe');
    const took = Date.now() - t0;
    upstream.silent = false;
    expect(answer.error).toEqual({ code: -32005, message: 'Node is unhealthy: the upstream RPC did not answer in time', data: { reason: 'upstream_timeout' } });
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(took).toBeLessThan(TIMEOUT_MS + 1_500);
    c.close();
  });

  it('down, then never completing the handshake: -32005 upstream_unavailable within requestTimeoutMs; back: subscribes again', async () => {
    const c = await PubsubClient.open(keyed());
    await upstream.stop();
    const unavailable = { code: -32005, message: 'Node is unhealthy: the upstream RPC is unavailable', data: { reason: 'upstream_unavailable' } };
    let t0 = Date.now();
    expect((await c.call('slotSubscribe')).error).toEqual(unavailable);
    expect(Date.now() - t0).toBeLessThan(TIMEOUT_MS + 1_500);

    // A listener that accepts TCP and never answers the upgrade.
    const sockets: Socket[] = [];
    const blackHole: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(port, '127.0.0.1', () => r()));
    t0 = Date.now();
    expect((await c.call('slotSubscribe')).error).toEqual(unavailable);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(took).toBeLessThan(TIMEOUT_MS + 1_500);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => blackHole.close(() => r()));

    upstream = new FakeUpstream(port);
    await upstream.start();
    const id = await c.subscribe('slotSubscribe');
    expect((await c.next((m) => m.method === 'slotNotification')).params.subscription).toBe(id);
    c.close();
  });
});

describe('relay shutdown', () => {
  it('closes every client with 1001 shutting_down', async () => {
    const c = await PubsubClient.open(keyed());
    await c.subscribe('slotSubscribe');
    const stopped = relay.stop('SIGTERM');
    expect(await c.closed).toEqual({ code: 1001, reason: 'shutting_down' });
    await stopped;
  });
});
