// The QUIC transport's own test (src/quic/client-connection.ts): each answer of tryWrite() against an in-process
// quiche pair on 127.0.0.1 (our client, the localnet's TPU endpoint), with the server holding or returning stream
// credit at will, and a stream the server refuses. The outcomes are the contract the egress connection worker is
// built on: `written`, `no-credit` (no MAX_STREAMS credit left: wait for onWritable), `no-room` (the congestion window
// is full: offer the same transaction again on onWritable), `failed` (closed, empty, too large).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QuicClientConnection, TPU_CLOSE_CODE, createRandomIdentityCertificate, type IdentityCertificate } from '../../../src/quic/index.js';
import { QuicServerEndpoint, type QuicServerPeer } from '../../../src/localnet/tpu-endpoint.js';
import { until } from '../../helpers/wait-for.js';

/** Streams each connection may have open at once (the server's initial_max_streams_uni). */
const STREAM_LIMIT = 4;

describe('QuicClientConnection.tryWrite against an in-process TPU endpoint', () => {
  let server: QuicServerEndpoint;
  let port: number;
  let cert: IdentityCertificate;
  /** While true the server reads none of a connection's new streams, so their credit is not given back. */
  let holdStreams = false;
  const received: Buffer[] = [];
  const clients: QuicClientConnection[] = [];

  beforeAll(async () => {
    cert = await createRandomIdentityCertificate();
    server = await QuicServerEndpoint.listen({
      host: '127.0.0.1',
      port: 0,
      certificate: await createRandomIdentityCertificate(),
      maxConcurrentUniStreams: STREAM_LIMIT,
      admitStream: (_peer: QuicServerPeer) => (holdStreams ? 50 : 0),
      onTransaction: (tx: Uint8Array) => {
        received.push(Buffer.from(tx));
      },
    });
    port = server.address().port;
  });
  afterEach(() => {
    holdStreams = false;
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    await server.close();
  });

  async function connect(onWritable?: () => void): Promise<QuicClientConnection> {
    const c = await QuicClientConnection.connect({ host: '127.0.0.1', port, identity: cert, maxTransactionBytes: 4096, onWritable });
    clients.push(c);
    return c;
  }

  /** A distinct 200-byte transaction (the server only frames streams; it does not parse them). */
  function tx(n: number, bytes = 200): Buffer {
    const b = Buffer.alloc(bytes, 7);
    b.writeUInt32LE(n, 0);
    return b;
  }

  it('`failed` for an empty transaction, one over maxTransactionBytes, and any write after close', async () => {
    const c = await connect();
    expect(c.tryWrite(new Uint8Array(0))).toBe('failed');
    expect(c.tryWrite(new Uint8Array(4097))).toBe('failed');
    expect(c.tryWrite(tx(1))).toBe('written');
    c.close();
    expect(c.tryWrite(tx(2))).toBe('failed');
  });

  it('`no-credit` once the server holds every stream, `written` again after onWritable when credit comes back', async () => {
    let wakeups = 0;
    const c = await connect(() => wakeups++);
    const before = received.length;
    holdStreams = true;
    const answers: string[] = [];
    for (let n = 0; n < STREAM_LIMIT + 2; n++) answers.push(c.tryWrite(tx(100 + n)));
    // The server's initial credit, then nothing: the transport refuses rather than queue (it never queues).
    expect(answers.slice(0, STREAM_LIMIT)).toEqual(Array(STREAM_LIMIT).fill('written'));
    expect(answers.slice(STREAM_LIMIT)).toEqual(['no-credit', 'no-credit']);
    expect(c.peerStreamsLeft()).toBe(0);
    const wokenBefore = wakeups;
    holdStreams = false; // the held streams are read at the server's next check: MAX_STREAMS goes out
    // The server reads the held streams, then its MAX_STREAMS reaches us (an ACK may wake us first).
    await until(() => received.length >= before + STREAM_LIMIT && c.peerStreamsLeft() > 0, 5_000);
    expect(wakeups).toBeGreaterThan(wokenBefore);
    expect(c.tryWrite(tx(200))).toBe('written');
    await until(() => received.length >= before + STREAM_LIMIT + 1, 5_000);
    expect(received.slice(before).map((b) => b.readUInt32LE(0)).sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 200]);
  });

  it('`no-room` when a burst outruns the congestion window; the same transaction offered again on onWritable goes out', async () => {
    // A server with credit to spare (512 streams): full-size transactions written back to back fill the initial
    // congestion window (about ten datagrams) long before the stream limit, so `no-room` is what stops the burst.
    // Offered again after each onWritable until done.
    const wide = await QuicServerEndpoint.listen({
      host: '127.0.0.1',
      port: 0,
      certificate: await createRandomIdentityCertificate(),
      maxConcurrentUniStreams: 512,
      onTransaction: (t: Uint8Array) => {
        got.push(Buffer.from(t));
      },
    });
    const got: Buffer[] = [];
    const total = 40;
    let i = 0;
    let noRoom = 0;
    let other = 0;
    let c: QuicClientConnection | null = null;
    const fill = (): void => {
      while (c !== null && i < total) {
        const r = c.tryWrite(tx(1000 + i, 1232));
        if (r === 'written') i++;
        else {
          if (r === 'no-room') noRoom++;
          else if (r !== 'no-credit') other++;
          return;
        }
      }
    };
    try {
      c = await QuicClientConnection.connect({ host: '127.0.0.1', port: wide.address().port, identity: cert, onWritable: () => fill() });
      clients.push(c);
      fill();
      await until(() => i === total || other > 0, 10_000);
      expect(other).toBe(0);
      expect(noRoom).toBeGreaterThan(0);
      await until(() => got.length >= total, 10_000);
      expect(new Set(got.map((b) => b.readUInt32LE(0))).size).toBe(total);
      expect(got.every((b) => b.length === 1232)).toBe(true);
    } finally {
      await wide.close();
    }
  });

  it('a stream over the server\'s limit (1,233 bytes against its default 1,232) is refused: the connection closes with code 5', async () => {
    const strict = await QuicServerEndpoint.listen({
      host: '127.0.0.1',
      port: 0,
      certificate: await createRandomIdentityCertificate(),
      onTransaction: () => undefined,
    });
    try {
      const c = await QuicClientConnection.connect({ host: '127.0.0.1', port: strict.address().port, identity: cert, maxTransactionBytes: 4096 });
      expect(c.tryWrite(new Uint8Array(1233).fill(1))).toBe('written');
      const info = await c.closed;
      expect(info).toMatchObject({ by: 'peer', isApp: true, code: TPU_CLOSE_CODE.invalidStream });
      expect(c.tryWrite(tx(1))).toBe('failed');
    } finally {
      await strict.close();
    }
  });
});
