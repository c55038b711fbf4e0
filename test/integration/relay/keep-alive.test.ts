// HTTP keep-alive as a client sees it on the wire, on every uWS build that loads under this Node (docs/http-runtime.md).
// Our source build and the maintained build (both have per-app timeouts): an idle connection outlives web3.js's 19 s socket pool timeout, the relay announces exactly
// http.idleTimeoutSeconds and closes the connection within 4 s after it. Legacy build: uWS's compiled-in timer closes
// it 8-12 s after the last answer whatever it is told; the relay announces 8 and warns at start. Either way an
// unchanged web3.js client sends its next transaction after the idle spell without an error.
import { connect, type Socket } from 'node:net';
import { Connection } from '@solana/web3.js';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadableUwsBuilds } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelays, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const IDLE_TIMEOUT_S = 24;

/** A raw HTTP/1.1 connection: one request at a time, the response read by its content-length. */
class RawHttpConnection {
  private buffered = '';
  private waiter: (() => void) | undefined;
  closedAt: number | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closedAt = Date.now();
      this.waiter?.();
    });
  }

  static open(url: string): Promise<RawHttpConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawHttpConnection(socket)));
      socket.once('error', reject);
    });
  }

  async request(path: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
    if (this.closedAt !== undefined) throw new Error('connection already closed by the server');
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\n\r\n`);
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffered.slice(0, end).split('\r\n');
        const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers.get('content-length') ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.slice(end + 4, end + 4 + length);
          this.buffered = this.buffered.slice(end + 4 + length);
          return { status: Number(statusLine?.split(' ')[1]), headers, body };
        }
      }
      if (this.closedAt !== undefined) throw new Error('the server closed the connection before answering');
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  waitClosed(timeoutMs: number): Promise<number | undefined> {
    if (this.closedAt !== undefined) return Promise.resolve(this.closedAt);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve(this.closedAt);
      });
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

const BUILDS = loadableUwsBuilds();

describe('HTTP keep-alive (http.idleTimeoutSeconds: 24), every loadable uWS build side by side', () => {
  const envs = new Map<string, { up: FakeRpcUpstream; relay: RelayHandle }>();
  // Started and stopped side by side, like the tests.
  beforeAll(async () => {
    const ups = await Promise.all(BUILDS.map(() => startFakeRpcUpstream()));
    const relays = await startRelays(
      BUILDS.map((build, i) => ({
        config: { upstream: { rpcUrl: ups[i]!.url }, routes: { rpc: { endpoints: [ups[i]!.url] } }, http: { idleTimeoutSeconds: IDLE_TIMEOUT_S } },
        env: { SLOTRELAY_UWS_BUILD: build },
      })),
    ).catch(async (err: unknown) => {
      await Promise.all(ups.map((u) => u.close()));
      throw err;
    });
    BUILDS.forEach((build, i) => envs.set(build, { up: ups[i]!, relay: relays[i]! }));
  });
  afterAll(async () => {
    await Promise.all(
      [...envs.values()].map(async ({ up, relay }) => {
        await relay.stop();
        await up.close();
      }),
    );
  });

  it.concurrent.for(BUILDS)(
    '%s: an idle connection is kept exactly as long as announced and closed within 4 s after; web3.js is unharmed',
    { timeout: 45_000 },
    async (build, { expect }) => {
      const { up, relay } = envs.get(build)!;
      const announced = build !== 'legacy' ? IDLE_TIMEOUT_S : 8;
      const warned = relay.logs.some((l) => l.includes('"event":"http_idle_timeout"'));
      expect(warned, 'a start warning exactly when the build cannot keep http.idleTimeoutSeconds').toBe(build === 'legacy');
      // `reused` comes back after a pause inside the announced timeout; `idle` (rpc host) and `idleRelay` time out.
      const [reused, idle, idleRelay] = await Promise.all([
        RawHttpConnection.open(relay.rpcUrl),
        RawHttpConnection.open(relay.rpcUrl),
        RawHttpConnection.open(relay.relayUrl),
      ]);
      const connection = new Connection(relay.rpcUrl, { httpHeaders: { 'x-api-key': TEST_KEY }, commitment: 'confirmed' });
      try {
        for (const c of [reused, idle, idleRelay]) {
          const r = await c.request('/health');
          expect(r.status).toBe(200);
          expect(r.headers.get('keep-alive')).toBe(`timeout=${announced}`);
        }
        const idleSince = Date.now();
        const first = legacyTransfer();
        expect(await connection.sendRawTransaction(first.bytes, { skipPreflight: true })).toBe(first.signature);

        // Maintained: 21 s, longer than web3.js keeps a pooled socket. Legacy: 5 s, inside its 8 s.
        await new Promise((r) => setTimeout(r, build !== 'legacy' ? 21_000 : 5_000));
        const again = await reused.request('/health');
        expect([again.status, again.body]).toEqual([200, 'ok']);
        expect(reused.closedAt).toBeUndefined();
        // web3.js after the idle spell: on its pooled socket (maintained) or a new one (legacy closed it meanwhile).
        const second = legacyTransfer();
        expect(await connection.sendRawTransaction(second.bytes, { skipPreflight: true })).toBe(second.signature);

        // The announced timeout is a promise kept (no close before it) and the close follows (within one 4 s tick).
        for (const c of [idle, idleRelay]) {
          const closedAt = await c.waitClosed(announced * 1000 + 6_000 - (Date.now() - idleSince));
          expect(closedAt, 'the idle connection was never closed').toBeDefined();
          const idleMs = (closedAt ?? 0) - idleSince;
          // At least the announced time, to within the lateness of uSockets' 4 s sweep: a sweep that runs late on a busy
          // host (its loop held by other work) counts the tick it was due for after the timeout was set, so the close
          // comes that much early (23,695 ms of 24 s in a CI rehearsal with the soak beside it). 1 s bounds that lateness
          // here; clients' pools give the hint a larger margin (undici drops a pooled socket 2 s before it).
          // idleSince is taken just after the answer arrived.
          expect(idleMs).toBeGreaterThanOrEqual(announced * 1000 - 1_000);
          expect(idleMs).toBeLessThan(announced * 1000 + 5_000);
        }
        await up.waitForSends(2);
      } finally {
        reused.destroy();
        idle.destroy();
        idleRelay.destroy();
      }
    },
  );
});
