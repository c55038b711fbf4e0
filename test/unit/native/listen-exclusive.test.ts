// A second listener on a port already taken must fail (uSockets' default SO_REUSEPORT would let it "listen" and take a
// share of the connections), and after the first closes, the port is free again.
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { describe, expect, it } from 'vitest';
import { listenExclusive } from '../../../src/native/listen-exclusive.js';
import { loadUws } from '../../../src/native/uws.js';
import { freePort } from '../../helpers/free-port.js';

const listen = (app: TemplatedApp, port: number): Promise<us_listen_socket | false> =>
  new Promise((resolve) => listenExclusive(app, '127.0.0.1', port, (s) => resolve(s)));

describe('listenExclusive', () => {
  it('refuses a second listener on the same port, which the default listen accepts', async () => {
    const { uws } = loadUws();
    const port = await freePort();
    const first = await listen(uws.App(), port);
    expect(first).not.toBe(false);
    expect(await listen(uws.App(), port)).toBe(false);
    // The default listen (SO_REUSEPORT) would have succeeded: what this module exists to prevent.
    const shared = await new Promise<unknown>((resolve) => uws.App().listen('127.0.0.1', port, (s) => resolve(s)));
    expect(shared).toBe(false); // the exclusive first listener keeps even a reuseport one out
    uws.closeSocket(first as us_listen_socket);
    const again = await listen(uws.App(), port);
    expect(again).not.toBe(false);
    uws.closeSocket(again as us_listen_socket);
  });
});
