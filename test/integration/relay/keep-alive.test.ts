// HTTP keep-alive as a client sees it on the wire: an idle connection outlives web3.js's 19 s socket pool timeout,
// the relay announces exactly what it guarantees, and closes the connection soon after (uWS as shipped closes at
// 8-12 s whatever it is told: src/native/uws.ts).
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { relayOnRecordingUpstream } from '../../helpers/relay-on-upstream.js';
import { TEST_KEY } from '../../helpers/relay-process.js';

const IDLE_TIMEOUT_S = 24;

const env = relayOnRecordingUpstream({
  http: { idleTimeoutSeconds: IDLE_TIMEOUT_S },
});

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

describe('HTTP keep-alive (http.idleTimeoutSeconds)', () => {
  it(
    'an idle connection serves a request after 21 s (> web3.js 19 s) and is closed within 4 s after the announced timeout',
    async () => {
      // Two connections opened together: `reused` comes back after 21 s of silence; `idle` is left alone to time out.
      const [reused, idle] = await Promise.all([RawHttpConnection.open(env.relay.rpcUrl), RawHttpConnection.open(env.relay.relayUrl)]);
      try {
        const first = await reused.request('/health');
        expect(first.status).toBe(200);
        expect(first.headers.get('keep-alive')).toBe(`timeout=${IDLE_TIMEOUT_S}`);
        const idleAnswered = await idle.request('/health');
        expect(idleAnswered.headers.get('keep-alive')).toBe(`timeout=${IDLE_TIMEOUT_S}`);
        const idleSince = Date.now();

        await new Promise((r) => setTimeout(r, 21_000));
        const again = await reused.request('/health');
        expect([again.status, again.body]).toEqual([200, 'ok']);
        expect(reused.closedAt).toBeUndefined();

        // The announced timeout is a promise kept (no close before it) and the close follows (within one 4 s tick).
        const closedAt = await idle.waitClosed(IDLE_TIMEOUT_S * 1000 + 6_000 - (Date.now() - idleSince));
        expect(closedAt, 'the idle connection was never closed').toBeDefined();
        const idleMs = (closedAt ?? 0) - idleSince;
        expect(idleMs).toBeGreaterThanOrEqual(IDLE_TIMEOUT_S * 1000 - 250); // idleSince is taken just after the answer arrived
        expect(idleMs).toBeLessThan(IDLE_TIMEOUT_S * 1000 + 5_000);
      } finally {
        reused.destroy();
        idle.destroy();
      }
    },
    45_000,
  );
});
