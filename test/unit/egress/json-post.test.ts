// postJson (src/egress/worker-routes/json-post.ts), the POST under the rpc and jito routes, against a real TCP listener: a kept-alive
// socket the server has dropped is retried once on a fresh one, and an oversized answer is refused, not buffered.
import { createServer, type Server, type Socket } from 'node:net';
import type { ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { keepAliveTarget, MAX_RESPONSE_BYTES, postJson, type JsonPostErrors } from '../../../src/egress/worker-routes/json-post.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A raw HTTP/1.1 listener: `answer(n, socket)` handles the n-th request of each connection (1-based). */
async function listen(answer: (nth: number, socket: Socket) => void): Promise<{ url: URL; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    let nth = 0;
    let buffered = '';
    socket.on('data', (d) => {
      buffered += d.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.slice(end + 4 + length);
      answer(++nth, socket);
    });
    socket.on('error', () => {});
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: new URL(`http://127.0.0.1:${port}/`), connections: () => connections };
}

const OK_BODY = '{"jsonrpc":"2.0","result":"sig","id":1}';
const ok = (socket: Socket): void => {
  socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${OK_BODY.length}\r\n\r\n${OK_BODY}`);
};

class TestError extends Error {}
const errors: JsonPostErrors = {
  timeout: (ms) => new TestError(`timeout ${ms}`),
  tooLarge: (status) => new TestError(`too large (HTTP ${status})`),
  network: (err) => err,
  answer: (status) => (status === 200 ? null : new TestError(`HTTP ${status}`)),
};

describe('postJson', () => {
  it('a kept-alive socket reset by the server is retried once on a fresh connection', async () => {
    // Each connection answers its first request, then resets on the second (an idle close racing the reuse).
    const server = await listen((nth, socket) => (nth === 1 ? ok(socket) : socket.resetAndDestroy()));
    const target = keepAliveTarget(server.url, 1, { 'content-type': 'application/json' }, 2_000, new Set<ClientRequest>());
    await postJson(target, '{"a":1}', errors);
    await postJson(target, '{"a":2}', errors); // reuses the socket, gets a reset, retries on a new one
    expect(server.connections()).toBe(2);
    expect(target.inFlight.size).toBe(0);
    target.agent.destroy();
  });

  it('without the retry the reset is the answer; an oversized answer is refused', async () => {
    const resetting = await listen((nth, socket) => (nth === 1 ? ok(socket) : socket.resetAndDestroy()));
    const t1 = keepAliveTarget(resetting.url, 1, {}, 2_000, new Set<ClientRequest>());
    await postJson(t1, '{}', errors);
    await expect(postJson(t1, '{}', errors, false)).rejects.toMatchObject({ code: 'ECONNRESET' });
    t1.agent.destroy();

    const huge = await listen((_, socket) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${MAX_RESPONSE_BYTES * 2}\r\n\r\n`);
      socket.write(Buffer.alloc(MAX_RESPONSE_BYTES * 2, 0x20));
    });
    const t2 = keepAliveTarget(huge.url, 1, {}, 2_000, new Set<ClientRequest>());
    await expect(postJson(t2, '{}', errors)).rejects.toThrow('too large (HTTP 200)');
    expect(t2.inFlight.size).toBe(0);
    t2.agent.destroy();
  });
});
