// Pipelined requests over one raw TCP connection (harness process; hot for the few pipelined cases). Requests are
// well-formed HTTP/1.1 (Content-Length bodies) written back to back in one write; answers are read in order with a
// minimal response reader (status line, headers, Content-Length or chunked body). The last request asks for
// `connection: close`.
import { connect } from 'node:net';
import type { FuzzRequest } from './cases.js';
import type { Answer } from './oracle.js';

export type PipelineResult = { readonly ok: true; readonly answers: Answer[] } | { readonly ok: false; readonly answers: Answer[]; readonly error: string; readonly timedOut: boolean };

function serialize(r: FuzzRequest, host: string, last: boolean): Buffer {
  const lines = [`${r.method} ${r.path} HTTP/1.1`, `host: ${host}`];
  for (const [k, v] of Object.entries(r.headers)) lines.push(`${k}: ${v}`);
  if (r.body !== null) lines.push(`content-length: ${r.body.length}`);
  if (last) lines.push('connection: close');
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), r.body ?? Buffer.alloc(0)]);
}

/** One complete answer at the start of `buf`, and its length; null while incomplete. */
function readAnswer(buf: Buffer): { answer: Answer; used: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(head[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of head.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  let pos = end + 4;
  if ((headers['transfer-encoding'] ?? '').toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = buf.indexOf('\r\n', pos);
      if (eol < 0) return null;
      const size = parseInt(buf.subarray(pos, eol).toString('latin1'), 16);
      if (buf.length < eol + 2 + size + 2) return null;
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      pos = eol + 2 + size + 2;
      if (size === 0) return { answer: { status, headers, body: Buffer.concat(parts) }, used: pos };
    }
  }
  const len = Number(headers['content-length'] ?? 0);
  if (buf.length < pos + len) return null;
  return { answer: { status, headers, body: Buffer.from(buf.subarray(pos, pos + len)) }, used: pos + len };
}

export function sendPipelined(baseUrl: string, requests: readonly FuzzRequest[], timeoutMs: number): Promise<PipelineResult> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const answers: Answer[] = [];
    let buf = Buffer.alloc(0);
    let settled = false;
    const sock = connect({ host: url.hostname, port: Number(url.port) });
    const finish = (r: PipelineResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, answers, error: `${answers.length} of ${requests.length} answers within ${timeoutMs} ms`, timedOut: true }), timeoutMs);
    sock.on('connect', () => sock.write(Buffer.concat(requests.map((r, i) => serialize(r, url.host, i === requests.length - 1)))));
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (let a = readAnswer(buf); a !== null; a = readAnswer(buf)) {
        answers.push(a.answer);
        buf = buf.subarray(a.used);
        if (answers.length === requests.length) return finish({ ok: true, answers });
      }
    });
    sock.on('error', (err) => finish({ ok: false, answers, error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim(), timedOut: false }));
    sock.on('close', () => finish({ ok: false, answers, error: `connection closed after ${answers.length} of ${requests.length} answers`, timedOut: false }));
  });
}
