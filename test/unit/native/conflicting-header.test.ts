// Our uWS build's one-call header check (vendor/uws-patches/0007, `req.hasConflictingHeader(name)`), which the front
// uses for Content-Length headers that disagree (src/http/request.ts) instead of walking every header through
// JavaScript: asked of real requests on a loopback listener, with the name as an ArrayBuffer (as the front passes it)
// and as a string. On a host where our build was not made, the prebuilt build lacks the method (the front walks).
import { connect } from 'node:net';
import type { HttpRequest, us_listen_socket } from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offHeapBytes } from '../../../src/http/off-heap-bytes.js';
import { listenExclusive } from '../../../src/native/listen-exclusive.js';
import { loadUws } from '../../../src/native/uws.js';

interface Patched {
  hasConflictingHeader?(name: ArrayBuffer | string): boolean;
}

const CONTENT_LENGTH = offHeapBytes('content-length');
const { uws, build } = loadUws();
/** What the handler saw for the last request: [content-length as bytes, content-length as a string, x-a]. */
let seen: (boolean | 'absent')[] = [];
let socket: us_listen_socket | false = false;
let port = 0;

beforeAll(async () => {
  const app = uws.App();
  app.any('/*', (res, req: HttpRequest) => {
    const check = req as unknown as Patched;
    seen = check.hasConflictingHeader === undefined ? ['absent'] : [check.hasConflictingHeader(CONTENT_LENGTH), check.hasConflictingHeader('content-length'), check.hasConflictingHeader('x-a')];
    res.onAborted(() => undefined);
    res.onData((_chunk, last) => {
      if (last) res.end('ok');
    });
  });
  socket = await new Promise<us_listen_socket | false>((resolve) => listenExclusive(app, '127.0.0.1', 0, resolve));
  if (socket === false) throw new Error('no listener');
  port = uws.getSocketPort(socket);
});

afterAll(() => {
  if (socket !== false) uws.closeSocket(socket);
});

/** Sends one raw request and resolves with the first answer's status line once it arrives. */
function ask(headers: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.includes('\r\n')) {
        s.destroy();
        resolve(text.slice(0, text.indexOf('\r\n')));
      }
    });
    s.on('error', reject);
    s.write(`POST /x HTTP/1.1\r\nhost: t\r\n${headers}\r\n${body}`);
  });
}

describe('req.hasConflictingHeader (our uWS build, patch 0007)', () => {
  it(`answers per request on the loaded build (${build.id})`, async () => {
    if (build.id !== 'source') {
      // A prebuilt build: no such method; the front walks the headers instead.
      await ask('content-length: 2\r\n', 'ab');
      expect(seen).toEqual(['absent']);
      return;
    }
    const cases: [string, boolean, boolean][] = [
      // headers, content-length conflicts, x-a conflicts
      ['content-length: 2\r\n', false, false],
      ['content-length: 2\r\ncontent-length: 2\r\n', false, false], // identical repeats are one value
      ['x-a: 1\r\ncontent-length: 2\r\nx-a: 1\r\n', false, false],
      ['x-a: 1\r\ncontent-length: 2\r\nx-a: 2\r\n', false, true],
      ['Content-Length: 2\r\nx-b: 0\r\nCONTENT-LENGTH: 2\r\ncontent-length: 2\r\n', false, false], // names are lower-cased by uWS
    ];
    for (const [headers, cl, xa] of cases) {
      expect(await ask(headers, 'ab'), headers).toBe('HTTP/1.1 200 OK');
      expect(seen, headers).toEqual([cl, cl, xa]);
    }
    // A conflict: the handler runs (the relay answers it 400 itself); uWS frames the body by the first length.
    await ask('content-length: 2\r\nx-b: 0\r\ncontent-length: 3\r\n', 'ab');
    expect(seen).toEqual([true, true, false]);
  });
});
