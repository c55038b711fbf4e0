// An answer written before the request's body was read (an unknown key's 401, a 415, a 404 with a body) keeps the
// connection: the relay reads the body and drops it, then answers, so the client's next request goes on the same
// socket. Closing there (the first fix of issue #30 item 9) made a client with a bad key pay a TCP handshake per
// request: its 401s ran at 0.51x the accept rate in bench-e2e, against the "refusing costs no more than accepting"
// target of issue #18. A body longer than 64 KiB, or one still arriving 500 ms after the answer was due, gets the
// answer and the connection closed (a dribbled body must not hold the socket: slowloris-keep-alive.test.ts).
// Raw sockets against a real relay on a recording upstream.
import { describe, expect, it } from 'vitest';
import { exchangeInTurn } from '../../helpers/raw-http.js';
import { relayOnFakeRpcUpstream } from '../../helpers/relay-on-upstream.js';
import { TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const env = relayOnFakeRpcUpstream();

function post(path: string, key: string, body: string, contentType = 'application/json'): string {
  return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${contentType}\r\nx-api-key: ${key}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function send(): string {
  const tx = legacyTransfer();
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] });
}

describe('an early answer keeps the connection', () => {
  it('a 401 (unknown key), a 415 and a 405 with a body, each followed by an accepted sendTransaction on the same socket', async () => {
    const url = env.relay.rpcUrl;
    const wrongKey = '00000000-0000-4000-8000-000000000000';
    const e = await exchangeInTurn(url, [
      [post('/', wrongKey, send())],
      [post('/', TEST_KEY, send())],
      [post('/', TEST_KEY, send(), 'text/plain')],
      [post('/', TEST_KEY, send())],
      [post('/no-such-path', TEST_KEY, send())],
      [post('/', TEST_KEY, send())],
    ]);
    expect(e.statuses).toEqual([401, 200, 415, 200, 405, 200]); // POST to a path the host does not serve: 405
    expect(e.closed).toBe(false);
    expect(e.text).not.toContain('connection: close');
  });

  it('the body behind a 401 split across segments is read to its end first', async () => {
    const req = post('/', '00000000-0000-4000-8000-000000000000', send());
    const cut = req.indexOf('\r\n\r\n') + 10;
    const e = await exchangeInTurn(env.relay.rpcUrl, [[req.slice(0, cut), req.slice(cut)], [post('/', TEST_KEY, send())]], { gapMs: 100 });
    expect(e.statuses).toEqual([401, 200]);
    expect(e.closed).toBe(false);
  });

  it('a body over 64 KiB behind a 401 closes the connection (it is not read)', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth', pad: 'x'.repeat(70_000) });
    const e = await exchangeInTurn(env.relay.rpcUrl, [[post('/', '00000000-0000-4000-8000-000000000000', big)], [post('/', TEST_KEY, send())]]);
    expect(e.statuses[0]).toBe(401);
    expect(e.closed).toBe(true);
  });
});
