// Sends one fuzz request over keep-alive HTTP/1.1 (harness process; hot). node:http with one pooled Agent, so
// header names and values go out exactly as generated (no content type is added to a body that has none) and every
// body has an exact Content-Length (chunked framing is the HTTP parser's business, out of scope here). A request
// may write its body in pieces, a few ms apart, to make the relay assemble it from several chunks. An answer not
// complete within timeoutMs is a hang.
import { Agent, request } from 'node:http';
import type { FuzzRequest } from './cases.js';
import type { Answer } from './oracle.js';

export type SendResult =
  | { readonly ok: true; readonly answer: Answer; readonly ms: number }
  | { readonly ok: false; readonly error: string; readonly timedOut: boolean; readonly aborted?: boolean };

const MAX_ANSWER_BYTES = 8 << 20;

export function keepAliveAgent(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, keepAliveMsecs: 1_000, scheduling: 'lifo' });
}

export function send(baseUrl: string, r: FuzzRequest, agent: Agent, timeoutMs: number): Promise<SendResult> {
  const url = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (x: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(x);
    };
    const headers: Record<string, string | number> = { ...r.headers };
    if (r.body !== null) headers['content-length'] = r.body.length;
    const req = request({ host: url.hostname, port: Number(url.port), method: r.method, path: r.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(c);
      });
      res.on('end', () => done({ ok: true, answer: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }, ms: performance.now() - started }));
      res.on('error', (err) => done({ ok: false, error: `response: ${err.message}`, timedOut: false }));
    });
    const timer = setTimeout(() => {
      done({ ok: false, error: `no complete answer within ${timeoutMs} ms`, timedOut: true });
      req.destroy();
    }, timeoutMs);
    // After an answer (a 413 closes the connection while we may still be writing) a write error changes nothing.
    req.on('error', (err) => done({ ok: false, error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim(), timedOut: false }));
    if (r.abortAfterMs !== undefined) {
      // The client goes away: nothing to judge but the relay's health (crash, log errors) afterwards.
      req.on('finish', () =>
        setTimeout(() => {
          done({ ok: false, error: 'client closed the connection', timedOut: false, aborted: true });
          req.destroy();
        }, r.abortAfterMs),
      );
    }
    if (r.body === null) {
      req.end();
    } else if (!r.split) {
      req.end(r.body);
    } else {
      const cut = [Math.floor(r.body.length / 3), Math.floor((2 * r.body.length) / 3)];
      req.write(r.body.subarray(0, cut[0]));
      setTimeout(() => {
        if (req.destroyed) return;
        req.write(r.body!.subarray(cut[0], cut[1]));
        setTimeout(() => {
          if (!req.destroyed) req.end(r.body!.subarray(cut[1]));
        }, 2);
      }, 2);
    }
  });
}
