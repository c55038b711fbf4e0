// Our uWS build's `req.getTargetAuthority()` (vendor/uws-patches/0010), which the admin listener's DNS-rebinding
// check reads (src/status/admin-server.ts): asked of real requests on a loopback listener, whole, split at every byte
// of the request line, and pipelined behind one another (the value is per request). The prebuilt builds lack the
// method and answer absolute-form targets 505 before any handler runs.
import { connect } from 'node:net';
import type { HttpRequest, us_listen_socket } from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenExclusive } from '../../../src/native/listen-exclusive.js';
import { loadUws } from '../../../src/native/uws.js';

interface Patched {
  getTargetAuthority?(): string;
}

const { uws, build } = loadUws();
let socket: us_listen_socket | false = false;
let port = 0;

beforeAll(async () => {
  const app = uws.App();
  // Each answer's body is what the handler saw: the path and the authority ('absent' without the method).
  app.any('/*', (res, req: HttpRequest) => {
    const check = req as unknown as Patched;
    res.end(`${req.getUrl()} ${check.getTargetAuthority === undefined ? 'absent' : JSON.stringify(check.getTargetAuthority())}`);
  });
  socket = await new Promise<us_listen_socket | false>((resolve) => listenExclusive(app, '127.0.0.1', 0, resolve));
  if (socket === false) throw new Error('no listener');
  port = uws.getSocketPort(socket);
});

afterAll(() => {
  if (socket !== false) uws.closeSocket(socket);
});

/** Writes `chunks` 20 ms apart on one connection; resolves with every answer's status and body once `n` arrived. */
function ask(chunks: readonly string[], n = 1): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    s.setNoDelay(true);
    let text = '';
    const answers = (): string[] =>
      [...text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n(?:[^\r]+\r\n)*?[Cc]ontent-[Ll]ength: (\d+)\r\n(?:[^\r]+\r\n)*\r\n/g)].flatMap((m) => {
        const at = m.index + m[0].length;
        return text.length >= at + Number(m[2]) ? [`${m[1]} ${text.slice(at, at + Number(m[2]))}`] : [];
      });
    const timer = setTimeout(() => {
      s.destroy();
      resolve([...answers(), `(closed or silent: ${JSON.stringify(text.slice(0, 40))})`]);
    }, 2_000);
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (answers().length >= n) {
        clearTimeout(timer);
        s.destroy();
        resolve(answers());
      }
    });
    s.on('error', reject);
    void (async () => {
      for (const [i, c] of chunks.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        s.write(c);
      }
    })();
  });
}

const request = (target: string): string => `GET ${target} HTTP/1.1\r\nhost: t\r\n\r\n`;

describe('req.getTargetAuthority (our uWS build, patch 0010)', () => {
  it(`answers per request on the loaded build (${build.id})`, async () => {
    if (build.id !== 'source') {
      expect(await ask([request('/status.json')])).toEqual(['200 /status.json absent']);
      return;
    }
    const cases: [string, string][] = [
      // target, what the handler sees (path, authority as sent)
      ['/status.json', '/status.json ""'],
      ['http://evil.example/status.json', '/status.json "evil.example"'],
      ['HTTP://Evil.Example:8890/status.json?x=1', '/status.json "Evil.Example:8890"'],
      ['http://127.0.0.1:8890@evil.example/', '/ "127.0.0.1:8890@evil.example"'],
      ['https://[::1]:8890', '/ "[::1]:8890"'], // empty path: "/"
    ];
    for (const [target, seen] of cases) expect(await ask([request(target)]), target).toEqual([`200 ${seen}`]);
  });

  it.runIf(build.id === 'source')('keeps the authority when the request line arrives in two segments (every split point)', async () => {
    const whole = request('http://evil.example:8890/status.json');
    const line = whole.indexOf('\r\n');
    const got: string[] = [];
    for (let at = 1; at <= line; at++) {
      const [answer] = await ask([whole.slice(0, at), whole.slice(at)]);
      if (answer !== '200 /status.json "evil.example:8890"') got.push(`split at ${at}: ${answer}`);
    }
    expect(got).toEqual([]);
  });

  it.runIf(build.id === 'source')('is reset for every request: pipelined origin-form behind absolute-form sees none', async () => {
    const both = request('http://evil.example/a') + request('/b') + request('http://127.0.0.1:1/c');
    expect(await ask([both], 3)).toEqual(['200 /a "evil.example"', '200 /b ""', '200 /c "127.0.0.1:1"']);
  });
});
